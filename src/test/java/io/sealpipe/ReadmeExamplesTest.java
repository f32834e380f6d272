package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block of README.md and of the guides under docs/ ({@code docs/*.md})
 * compiles. A block that starts with {@code import} lines is compiled with exactly those (and
 * {@code java.lang}), so a reader who copies it lacks nothing; any other block gets the JDK's
 * {@code java.io}, {@code java.nio} and {@code java.util} packages, sealpipe's packages and
 * Hadoop's {@code org.apache.hadoop.crypto} (which has its own {@code CryptoInputStream} and
 * {@code CryptoOutputStream}) with wildcards, as an application using both does. Each block becomes the
 * body of a method of its own class; the variables it uses without declaring them ({@link
 * #GIVEN}) are the method's parameters. Every diagnostic is reported, by file and line.
 */
class ReadmeExamplesTest {
    /** The JDK's packages, imported for a block that shows no imports of its own. */
    private static final List<String> JDK_IMPORTS = List.of("java.io.*", "java.nio.*", "java.nio.channels.*",
            "java.nio.file.*", "java.util.*");

    /**
     * sealpipe's packages and Hadoop's crypto classes, imported for a block that shows no imports
     * of its own. A block that starts with {@code import} lines gets those instead, so the imports
     * it shows must be complete.
     */
    private static final List<String> LIBRARY_IMPORTS = List.of("io.sealpipe.*", "io.sealpipe.ctr.*",
            "io.sealpipe.gcm.*", "io.sealpipe.snappy.*", "io.sealpipe.engine.*", "org.apache.hadoop.crypto.*");

    /** The variables the examples take as given, with their types. */
    private static final Map<String, String> GIVEN = new LinkedHashMap<>();

    static {
        for (String name : List.of("key", "iv", "nextIv", "otherIv", "blockId", "data", "block", "nonce", "aad", "plain",
                "sealed", "in", "out")) {
            GIVEN.put(name, "byte[]");
        }
        GIVEN.put("path", "java.nio.file.Path");
        GIVEN.put("sink", "java.io.OutputStream");
        GIVEN.put("source", "java.io.InputStream");
        GIVEN.put("gcm", "io.sealpipe.gcm.GcmStreams");
        GIVEN.put("fsIn", "org.apache.hadoop.fs.FSDataInputStream");
    }

    /** A local declaration: a type (or var) then the name, then = or : (for-each). */
    private static final Pattern DECLARATION =
            Pattern.compile("\\b(?:var|byte\\[\\]|int|long|[A-Z][\\w.]*(?:<[^>]*>)?(?:\\[\\])?)\\s+(\\w+)\\s*[=:]");

    /** A ```java block: the file it is in (relative to the project), where its first line is, and its text. */
    record Block(String file, int line, String code) {}

    @TempDir
    Path classes;

    /** The ```java blocks of {@code lines}, the text of {@code file}. */
    static List<Block> javaBlocks(String file, List<String> lines) {
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).strip().equals("```java")) {
                int first = i + 1;
                StringBuilder code = new StringBuilder();
                for (i = first; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
                    code.append(lines.get(i)).append('\n');
                }
                blocks.add(new Block(file, first + 1, code.toString())); // 1-based
            }
        }
        return blocks;
    }

    /** The given variables {@code code} uses (as a name, not after a dot) and does not declare itself. */
    static Set<String> freeVariables(String code) {
        Set<String> declared = new TreeSet<>();
        Matcher m = DECLARATION.matcher(code);
        while (m.find()) {
            declared.add(m.group(1));
        }
        Set<String> free = new TreeSet<>();
        for (String name : GIVEN.keySet()) {
            if (!declared.contains(name) && Pattern.compile("(?<![\\w.])" + name + "\\b").matcher(code).find()) {
                free.add(name);
            }
        }
        return free;
    }

    /**
     * The class around block {@code i}: a package line, the JDK's imports and sealpipe's (or
     * blank lines, for a block with imports of its own), the block's own imports on one line, then the class and method line; the block's
     * first line is line {@link #HEADER_LINES} + 1. The block's import lines become blank lines
     * in the method, so its line numbers stay those of the file.
     */
    static String wrap(int i, Block block) {
        List<String> parameters = new ArrayList<>();
        for (String name : freeVariables(block.code())) {
            parameters.add(GIVEN.get(name) + " " + name);
        }
        List<String> own = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        boolean header = true;
        for (String line : block.code().lines().toList()) {
            header = header && (line.isBlank() || line.strip().startsWith("import "));
            if (header && !line.isBlank()) {
                own.add(line.strip());
                body.append('\n');
            } else {
                body.append(line).append('\n');
            }
        }
        StringBuilder text = new StringBuilder("package readme;\n");
        for (String name : JDK_IMPORTS) {
            text.append(own.isEmpty() ? "import " + name + ";" : "").append('\n');
        }
        for (String name : LIBRARY_IMPORTS) {
            text.append(own.isEmpty() ? "import " + name + ";" : "").append('\n');
        }
        text.append(String.join(" ", own)).append('\n');
        return text + "class Example" + i + " { void run(" + String.join(", ", parameters) + ") throws Exception {\n"
                + body + "}}\n";
    }

    static final int HEADER_LINES = 3 + JDK_IMPORTS.size() + LIBRARY_IMPORTS.size(); // package, imports, own imports, class

    /** The guides: every {@code .md} file under docs/, by name, as "docs/NAME.md". */
    static List<String> guides() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("docs"))) {
            return files.map(p -> "docs/" + p.getFileName()).filter(name -> name.endsWith(".md")).sorted().toList();
        }
    }

    @Test
    void everyJavaExampleCompilesAlongsideHadoopsCryptoClasses() throws IOException {
        List<Block> blocks = new ArrayList<>(javaBlocks("README.md", read("README.md")));
        assertFalse(blocks.isEmpty(), "no ```java blocks in README.md");
        for (String guide : guides()) {
            blocks.addAll(javaBlocks(guide, read(guide)));
        }
        List<JavaFileObject> sources = new ArrayList<>();
        for (int i = 0; i < blocks.size(); i++) {
            String name = "readme/Example" + i + ".java";
            String text = wrap(i, blocks.get(i));
            sources.add(new SimpleJavaFileObject(URI.create("string:///" + name), JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return text;
                }
            });
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "no system Java compiler: run the tests on a JDK");
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
            List<String> options = List.of("-classpath", testClassPath(), "-d", classes.toString(), "-proc:none",
                    "-Xlint:all");
            javac.getTask(null, files, diagnostics, options, null, sources).call();
        }
        List<String> problems = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            problems.add(where(blocks, d) + ": " + d.getKind() + ": " + d.getMessage(Locale.ROOT));
        }
        assertTrue(problems.isEmpty(), problems.size() + " diagnostic(s) in the Java examples of README.md and docs/:\n  "
                + String.join("\n  ", problems));
    }

    private static List<String> read(String file) throws IOException {
        return Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
    }

    /** "FILE line N" (README.md, docs/streams.md, ...) for a diagnostic in a block, or the generated file's name. */
    private static String where(List<Block> blocks, Diagnostic<? extends JavaFileObject> d) {
        if (d.getSource() == null) {
            return "javac";
        }
        Matcher m = Pattern.compile("Example(\\d+)\\.java").matcher(d.getSource().getName());
        if (!m.find()) {
            return d.getSource().getName();
        }
        Block block = blocks.get(Integer.parseInt(m.group(1)));
        long line = d.getLineNumber() - HEADER_LINES - 1;
        return line >= 0 && line < block.code().lines().count()
                ? block.file() + " line " + (block.line() + line)
                : block.file() + " block at line " + block.line() + " (wrapper line " + d.getLineNumber() + ")";
    }

    /**
     * The test class path. Surefire may start the JVM with a manifest-only jar, whose
     * Class-Path javac follows too; it also passes the real list in a property.
     */
    private static String testClassPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }
}
