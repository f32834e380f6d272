import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;

/**
 * Where a build's test time went, from the reports it left under {@code target}: each {@code
 * src/it} project's time (the invoker's {@code BUILD-*.xml}), each Surefire run's total (every
 * {@code surefire-reports*} directory), and the slowest test classes. {@code .ci/run} prints it
 * at the end, so that every CI log says where its time went (docs/contributing.md, "CI time").
 * Run as a single-file program: {@code java src/test/build/TestTimes.java target [N]}.
 */
public final class TestTimes {
    private TestTimes() {}

    record Suite(String run, String name, double seconds, int tests) {}

    public static void main(String[] args) throws Exception {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        int slowest = args.length > 1 ? Integer.parseInt(args[1]) : 25;
        if (!Files.isDirectory(target)) {
            System.err.println("test-times: no directory " + target);
            System.exit(2);
        }

        Path invoker = target.resolve("invoker-reports");
        if (Files.isDirectory(invoker)) {
            System.out.println("test-times: src/it projects (the invoker runs two at a time)");
            try (Stream<Path> files = Files.list(invoker)) {
                for (Path report : files.filter(f -> f.getFileName().toString().startsWith("BUILD-")).sorted().toList()) {
                    Element job = root(report);
                    String project = report.getFileName().toString().replaceAll("^BUILD-|\\.xml$", "");
                    System.out.printf(Locale.ROOT, "  %-24s %8s s  %s%n", project, job.getAttribute("time"),
                            job.getAttribute("result"));
                }
            }
        }

        List<Suite> suites = new ArrayList<>();
        try (Stream<Path> dirs = Files.walk(target, 6)) {
            for (Path dir : dirs.filter(d -> Files.isDirectory(d) && d.getFileName().toString().startsWith("surefire-reports"))
                    .sorted().toList()) {
                String run = target.relativize(dir).toString();
                try (Stream<Path> files = Files.list(dir)) {
                    for (Path report : files.filter(f -> f.getFileName().toString().matches("TEST-.*\\.xml")).toList()) {
                        Element suite = root(report);
                        suites.add(new Suite(run, suite.getAttribute("name"), seconds(suite.getAttribute("time")),
                                Integer.parseInt(suite.getAttribute("tests"))));
                    }
                }
            }
        }
        Map<String, double[]> runs = new TreeMap<>();
        for (Suite s : suites) {
            double[] total = runs.computeIfAbsent(s.run(), r -> new double[3]);
            total[0] += s.seconds();
            total[1]++;
            total[2] += s.tests();
        }
        System.out.println("test-times: Surefire runs (the sum of their classes' times)");
        runs.forEach((run, t) -> System.out.printf(Locale.ROOT, "  %-60s %8.1f s  %4d classes %6d tests%n", run, t[0],
                (int) t[1], (int) t[2]));
        System.out.println("test-times: the " + slowest + " slowest test classes");
        suites.stream().sorted(Comparator.comparingDouble(Suite::seconds).reversed()).limit(slowest)
                .forEach(s -> System.out.printf(Locale.ROOT, "  %8.1f s  %-70s %s%n", s.seconds(), s.name(), s.run()));
    }

    private static double seconds(String time) {
        try {
            return Double.parseDouble(time.replace(",", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static Element root(Path report) throws IOException {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return factory.newDocumentBuilder().parse(report.toFile()).getDocumentElement();
        } catch (Exception e) {
            throw new IOException("cannot read " + report + ": " + e, e);
        }
    }
}
