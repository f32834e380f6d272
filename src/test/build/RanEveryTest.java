import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Fails the build when a test class that a run must run ran no test, or fewer than it has: a
 * tag filter, an include or a profile that matches nothing passes in Surefire, so the run is
 * checked against the sources. Run by the build as a single-file program ({@code java
 * RanEveryTest.java ...}, JDK only), after Surefire wrote its reports.
 *
 * <p>Which classes must have run:
 * <ul>
 *   <li>{@code --test-classes DIR}: every concrete test class compiled there ({@code *Test},
 *       {@code *Tests}, {@code Test*}, {@code *TestCase}, as Surefire picks them), except those
 *       tagged (class-level {@code @Tag}) with a group in {@code --excluded-groups=A,B}.
 *   <li>{@code --pom FILE --execution ID}: the classes that execution's {@code <include>}s name.
 * </ul>
 *
 * <p>Each must have a report in {@code --reports DIR} ({@code TEST-CLASS.xml}, and those of its
 * nested classes) whose tests, less the skipped ones, are at least the test methods its source
 * declares ({@code @Test}, {@code @ParameterizedTest}, {@code @RepeatedTest}, {@code
 * @TestFactory}, {@code @TestTemplate}, less those {@code @Disabled} or run only under a
 * condition, such as {@code @EnabledIfSystemProperty}), and at least one. Inherited
 * test methods are not counted: such a class must only have run something. The sources are
 * looked up in {@code --sources DIR,DIR}.
 *
 * <p>{@code --test-filter=${test}}: a run whose tests {@code -Dtest} chose is not checked.
 *
 * <p>Exit status 0 when every class ran all it has, 1 naming each one that did not, 2 on bad
 * arguments.
 */
public final class RanEveryTest {
    private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern TEST_METHOD = Pattern.compile(
            "@(?:org\\.junit\\.jupiter\\.api\\.)?(?:Test|RepeatedTest|TestFactory|TestTemplate"
                    + "|(?:org\\.junit\\.jupiter\\.params\\.)?ParameterizedTest)\\b(?!\\.)");
    /** A test disabled, or run only under a condition (a system property, an OS): not required. */
    private static final Pattern DISABLED = Pattern.compile(
            "@(?:org\\.junit\\.jupiter\\.api\\.(?:condition\\.)?)?(?:Disabled|EnabledIf|DisabledIf|EnabledOn|DisabledOn)\\w*\\b");
    /** A method's name: the first word before "(" that is not an annotation's (after the test annotation). */
    private static final Pattern METHOD_NAME = Pattern.compile("(?<![@\\w.])(\\w+)\\s*\\((?=[^)]*\\)\\s*(?:throws\\b[^{]*)?\\{)");
    private static final Pattern TAG = Pattern.compile("@(?:org\\.junit\\.jupiter\\.api\\.)?Tag\\(\\s*\"([^\"]+)\"\\s*\\)");

    private RanEveryTest() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                options.put(arg.substring(2, eq), arg.substring(eq + 1));
            } else if (arg.startsWith("--") && i + 1 < args.length) {
                options.put(arg.substring(2), args[++i]);
            } else {
                usage("unknown argument " + arg);
            }
        }
        for (String known : options.keySet()) {
            if (!Set.of("reports", "sources", "test-classes", "excluded-groups", "pom", "execution", "what",
                    "test-filter").contains(known)) {
                usage("unknown option --" + known);
            }
        }
        if (!options.containsKey("reports") || !options.containsKey("sources")
                || options.containsKey("test-classes") == options.containsKey("pom")
                || options.containsKey("pom") != options.containsKey("execution")) {
            usage("give --reports and --sources, and either --test-classes or --pom with --execution");
        }
        String filter = options.getOrDefault("test-filter", "");
        if (!filter.isBlank() && !filter.startsWith("${")) {
            System.out.println("ran-every-test: -Dtest=" + filter + " chose the tests: not checked");
            return;
        }
        Path reports = Path.of(options.get("reports"));
        List<Path> sources = new ArrayList<>();
        for (String dir : options.get("sources").split(",")) {
            if (!dir.isBlank()) {
                sources.add(Path.of(dir.trim()));
            }
        }
        String what = options.getOrDefault("what", "the tests");
        Set<String> classes = options.containsKey("pom")
                ? included(Path.of(options.get("pom")), options.get("execution"))
                : compiled(Path.of(options.get("test-classes")));
        Set<String> excluded = new TreeSet<>();
        for (String group : options.getOrDefault("excluded-groups", "").split(",")) {
            if (!group.isBlank()) {
                excluded.add(group.trim());
            }
        }

        List<String> problems = new ArrayList<>();
        int checked = 0;
        int ran = 0;
        for (String name : classes) {
            Path source = source(sources, name);
            if (source == null) {
                if (options.containsKey("pom")) {
                    problems.add(name + ": named by execution " + options.get("execution") + ", but no source has it");
                }
                continue; // a compiled class with no source here: a nested or helper class
            }
            String uncommented = strip(Files.readString(source), false);
            String code = strip(uncommented, true);
            String simple = name.substring(name.lastIndexOf('.') + 1);
            Matcher declaration = Pattern.compile("\\b(abstract\\s+)?(?:final\\s+)?class\\s+" + simple + "\\b")
                    .matcher(uncommented);
            if (!declaration.find() || declaration.group(1) != null) {
                continue; // abstract, or not a class: Surefire runs none
            }
            String head = uncommented.substring(0, declaration.start());
            Set<String> tags = new TreeSet<>();
            Matcher tag = TAG.matcher(head.substring(Math.max(0, head.lastIndexOf("import "))));
            while (tag.find()) {
                tags.add(tag.group(1));
            }
            if (tags.stream().anyMatch(excluded::contains)) {
                continue;
            }
            boolean named = options.containsKey("pom");
            boolean extendsAnother = Pattern.compile("\\bclass\\s+" + simple + "\\b[^{]*\\bextends\\b")
                    .matcher(uncommented).find();
            if (!named && DISABLED.matcher(head.substring(Math.max(0, head.lastIndexOf("import ")))).find()) {
                continue; // the whole class runs only under a condition (a timing run, the soak): not required here
            }
            List<String> methods = testMethods(code);
            if (!named && methods.isEmpty() && !extendsAnother) {
                continue; // a helper whose name looks like a test's (TestFiles): Surefire runs nothing of it
            }
            Map<String, int[]> cases = ran(reports, name);
            checked++;
            if (cases == null) {
                problems.add(name + ": no report in " + reports + " (it has " + methods.size() + " test methods"
                        + (tags.isEmpty() ? "" : ", tagged " + tags) + "): no execution ran it");
                continue;
            }
            int ranHere = cases.values().stream().mapToInt(c -> c[0] - c[1]).sum();
            ran += ranHere;
            List<String> missing = new ArrayList<>();
            for (String method : methods) {
                int[] c = cases.get(method);
                if (c == null || c[0] == c[1]) {
                    missing.add(method + (c == null ? " (not run)" : " (skipped)"));
                }
            }
            if (!missing.isEmpty()) {
                problems.add(name + ": " + missing.size() + " of its " + methods.size() + " test methods did not run: "
                        + String.join(", ", missing));
            } else if (ranHere == 0) {
                problems.add(name + ": ran no test (" + cases.values().stream().mapToInt(c -> c[1]).sum() + " skipped)");
            }
        }
        if (checked == 0) {
            problems.add("no test class to check: wrong --test-classes, --sources or --execution?");
        }
        if (!problems.isEmpty()) {
            System.err.println("ran-every-test: " + what + ": " + problems.size() + " of " + checked
                    + " classes did not run all they have:");
            problems.forEach(p -> System.err.println("  " + p));
            System.err.println("Check the <groups>, <excludedGroups> and <include>s of the Surefire executions, and"
                    + " that nothing was skipped (docs/contributing.md, \"Tests that must run\").");
            System.exit(1);
        }
        System.out.println("ran-every-test: " + what + ": " + checked + " classes ran all their tests (" + ran + " in all)");
    }

    private static void usage(String problem) {
        System.err.println("ran-every-test: " + problem + "\nusage: java RanEveryTest.java --reports DIR --sources DIR[,DIR]"
                + " (--test-classes DIR [--excluded-groups=A,B] | --pom FILE --execution ID) [--what TEXT]"
                + " [--test-filter=${test}]");
        System.exit(2);
    }

    /**
     * {@code source} without its comments, and without the text of its string and character
     * literals if {@code literals} (so that an annotation named in a comment or a string is not
     * counted). Text blocks are literals too.
     */
    static String strip(String source, boolean literals) {
        StringBuilder out = new StringBuilder(source.length());
        int n = source.length();
        for (int i = 0; i < n; ) {
            char c = source.charAt(i);
            if (c == '/' && i + 1 < n && source.charAt(i + 1) == '/') {
                while (i < n && source.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && source.charAt(i + 1) == '*') {
                int end = source.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                out.append(' ');
            } else if (c == '"' || c == '\'') {
                String quote = c == '"' && source.startsWith("\"\"\"", i) ? "\"\"\"" : String.valueOf(c);
                int end = i + quote.length();
                while (end < n && !source.startsWith(quote, end)) {
                    end += source.charAt(end) == '\\' ? 2 : 1;
                }
                end = Math.min(n, end + quote.length());
                out.append(literals ? quote + quote : source, literals ? 0 : i, literals ? 2 * quote.length() : end);
                i = end;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }


    /**
     * The names of the test methods {@code code} declares (its comments and literals stripped),
     * less those disabled or run only under a condition.
     */
    static List<String> testMethods(String code) {
        List<String> methods = new ArrayList<>();
        Matcher test = TEST_METHOD.matcher(code);
        int from = 0;
        while (test.find(from)) {
            int blockStart = Math.max(Math.max(code.lastIndexOf(';', test.start()), code.lastIndexOf('}', test.start())),
                    code.lastIndexOf('{', test.start())) + 1;
            Matcher name = METHOD_NAME.matcher(code);
            name.region(test.end(), code.length());
            if (!name.find()) {
                break;
            }
            String annotations = code.substring(blockStart, name.start());
            if (!DISABLED.matcher(annotations).find()) {
                methods.add(name.group(1));
            }
            from = name.end();
        }
        return methods;
    }

    /** Test classes compiled in {@code dir}, by the names Surefire runs by default. */
    private static Set<String> compiled(Path dir) throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(dir)) {
            files.map(dir::relativize).map(Path::toString).filter(f -> f.endsWith(".class") && !f.contains("$"))
                    .map(f -> f.substring(0, f.length() - ".class".length()).replace('/', '.'))
                    .filter(n -> {
                        String simple = n.substring(n.lastIndexOf('.') + 1);
                        return simple.endsWith("Test") || simple.endsWith("Tests") || simple.startsWith("Test")
                                || simple.endsWith("TestCase");
                    })
                    .forEach(names::add);
        }
        return names;
    }

    /** The classes an execution's includes name (paths such as io/sealpipe/XTest.java). */
    private static Set<String> included(Path pom, String execution) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        NodeList executions = factory.newDocumentBuilder().parse(pom.toFile()).getElementsByTagName("execution");
        for (int i = 0; i < executions.getLength(); i++) {
            Element e = (Element) executions.item(i);
            NodeList ids = e.getElementsByTagName("id");
            if (ids.getLength() > 0 && ids.item(0).getTextContent().trim().equals(execution)) {
                Set<String> names = new TreeSet<>();
                NodeList includes = e.getElementsByTagName("include");
                for (int j = 0; j < includes.getLength(); j++) {
                    String path = includes.item(j).getTextContent().trim();
                    if (path.contains("*")) {
                        throw new IllegalArgumentException("execution " + execution + " includes a pattern, " + path
                                + ": name classes");
                    }
                    names.add(path.replaceAll("\\.(java|class)$", "").replace('/', '.'));
                }
                if (names.isEmpty()) {
                    throw new IllegalArgumentException("execution " + execution + " in " + pom + " has no <include>");
                }
                return names;
            }
        }
        throw new IllegalArgumentException("no execution " + execution + " in " + pom);
    }

    private static Path source(List<Path> roots, String name) {
        for (Path root : roots) {
            Path file = root.resolve(name.replace('.', '/') + ".java");
            if (Files.isRegularFile(file)) {
                return file;
            }
        }
        return null;
    }

    /**
     * The test cases of {@code name} and its nested classes in their reports, by method name: how
     * many ran (a parameterized method's invocations count one each), and how many of those were
     * skipped; null if there is no report.
     */
    private static Map<String, int[]> ran(Path reports, String name) throws IOException {
        if (!Files.isDirectory(reports)) {
            return null;
        }
        Map<String, int[]> cases = null;
        try (Stream<Path> files = Files.list(reports)) {
            for (Path report : (Iterable<Path>) files::iterator) {
                String file = report.getFileName().toString();
                if (file.equals("TEST-" + name + ".xml") || file.startsWith("TEST-" + name + "$")) {
                    cases = cases == null ? new TreeMap<>() : cases;
                    NodeList testcases = parse(report).getElementsByTagName("testcase");
                    for (int i = 0; i < testcases.getLength(); i++) {
                        Element testcase = (Element) testcases.item(i);
                        String method = testcase.getAttribute("name").replaceAll("[(\\[].*$", "").trim();
                        int[] c = cases.computeIfAbsent(method, m -> new int[2]);
                        c[0]++;
                        c[1] += testcase.getElementsByTagName("skipped").getLength() > 0 ? 1 : 0;
                    }
                }
            }
        }
        return cases;
    }

    private static Element parse(Path report) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return factory.newDocumentBuilder().parse(report.toFile()).getDocumentElement();
        } catch (Exception e) {
            throw new UncheckedIOException(new IOException("cannot read the report " + report + ": " + e, e));
        }
    }
}
