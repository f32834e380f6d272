package io.sealpipe.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.soak.SoakStats.Kind;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The soak test of issue 29 ("Load"): {@link Soak} in a child JVM, 64 threads for the minutes
 * given (10 by default), mixing engines, modes, parallelism 1 and 2, whole-message reads, seeks,
 * positioned reads on shared channels and streams, writes, and {@code close()} from other
 * threads; every byte read is checked against the known plaintext. Passes when the child ran to
 * its end without a crash (no non-zero exit, no {@code hs_err} file) and counted no wrong byte,
 * no unexpected exception (anything but a read failing as closed on an object the soak itself
 * closed), no cipher left open, a heap in use after full collections within 5 % of where it
 * started, and never more shared workers than {@code Workers.MAX_THREADS}.
 *
 * <p>Not part of the normal suite: it runs only when {@value #MINUTES} is given (without a
 * number: 10).
 *
 * <pre>
 * mvn -o test -Dtest=SoakTest -Dsealpipe.soak.minutes=10         # the soak (fractions work: 0.5 = 30 s)
 * src/test/sanitize/run -o -Dtest=SoakTest -Dsealpipe.soak.minutes=2   # on the ASan/UBSan build
 * </pre>
 *
 * Also {@code -Dsealpipe.soak.threads=N} (default 64), {@code -Dsealpipe.test.seed=N}
 * (default 29) and {@code -Dsealpipe.soak.closeGcmStreams=false} (no {@code close()} of a
 * {@code GcmInputStream} that another thread reads: leaves out that stream's close() races to
 * look at the rest). Each thread's sequence of operations follows from the seed, though which
 * of them meet each other is up to the scheduler. The child's output (a {@code soak-kind} line per kind
 * of operation, {@code soak-unexpected} with the first stack trace of each distinct failure, and
 * {@code soak-total}) is echoed and kept in {@code target/soak/soak-<pid>.log}, beside any
 * {@code hs_err} file. In the sanitizer run the child JVM gets the instrumented library
 * ({@code sealpipe.native.library}) and inherits the ASan runtime ({@code LD_PRELOAD}) and the
 * sanitizer options from the environment, so its reports end up where the script looks; the
 * soak runs once there, in the run without {@code -Xcheck:jni}. Surefire's executions that run
 * tests again (commons-crypto-spark; the sanitizer's check-jni), which {@code -Dtest} selects
 * too, set {@code sealpipe.test.rerun}: the soak skips them.
 */
@EnabledIfSystemProperty(named = SoakTest.MINUTES, matches = "[0-9]+(\\.[0-9]+)?|true|")
@DisabledIfSystemProperty(named = "sealpipe.test.rerun", matches = ".+",
        disabledReason = "a second surefire run (commons-crypto-spark, or the sanitizer's check-jni):"
                + " the soak runs once")
class SoakTest {
    static final String MINUTES = "sealpipe.soak.minutes";
    /**
     * G1's retries of an allocation that waits for threads in JNI critical regions before it
     * throws OutOfMemoryError, on JDKs before 22 (JDK-8192647, gone with JDK 22's region pinning):
     * JDK 17 tries twice, and 64 threads on 2 cores, most of their time in openssl-jni calls that
     * pin arrays, got "Java heap space" with the heap under a third full (1 in 10 minutes). 100 is
     * the setting docs/engines.md ("Using the engines") gives for such loads; {@code
     * -Dsealpipe.soak.gcLockerRetries=2} runs with the JDK's own.
     */
    static final String GC_LOCKER_RETRIES = "sealpipe.soak.gcLockerRetries";
    /** What the child JVM gets from this one: how the engines load. */
    private static final List<String> FORWARDED = List.of("sealpipe.native.library", "sealpipe.openssl.libcrypto",
            "sealpipe.jce.provider", "sealpipe.cpu.aesni", "sealpipe.test.sanitize", "sealpipe.soak.closeGcmStreams");
    private static final Pattern FIELD = Pattern.compile("\"(\\w+)\":(\"((?:[^\"\\\\]|\\\\.)*)\"|[^,}]*)");

    @Test
    void soak() throws IOException, InterruptedException {
        String given = System.getProperty(MINUTES);
        double minutes = given.matches("[0-9.]+") ? Double.parseDouble(given) : 10; // -Dsealpipe.soak.minutes alone: 10
        int threads = Integer.getInteger("sealpipe.soak.threads", 64);
        long seed = Long.getLong("sealpipe.test.seed", 29);
        Path runs = Files.createDirectories(Path.of("target", "soak").toAbsolutePath());
        Path dir = Files.createTempDirectory(runs, "run-");
        Path log = runs.resolve("soak-" + ProcessHandle.current().pid() + ".log");

        // 64 threads may each hold a few MiB at once (a parallel stream's 1 MiB batches, a message
        // written to memory): 2 GiB ran out once under ASan, where everything is slower.
        List<String> command = ChildJvm.command("-Xmx3g", "-XX:ErrorFile=" + dir.resolve("hs_err_pid%p.log"));
        if (Runtime.version().feature() < 22) {
            command.addAll(List.of("-XX:+UnlockDiagnosticVMOptions",
                    "-XX:GCLockerRetryAllocationCount=" + Integer.getInteger(GC_LOCKER_RETRIES, 100)));
        }
        for (String p : FORWARDED) {
            if (System.getProperty(p) != null) {
                command.add("-D" + p + "=" + System.getProperty(p));
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Soak.class.getName(), dir.toString(),
                String.format(Locale.ROOT, "%.3f", minutes * 60), Integer.toString(threads), Long.toString(seed)));
        // The environment is inherited: LD_PRELOAD and ASAN_OPTIONS/UBSAN_OPTIONS in the sanitizer run, CI.
        Process child = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        List<String> lines = new ArrayList<>();
        Thread pump = new Thread(() -> echo(child, log, lines), "soak-output");
        pump.start();
        // Warm-up (at most 30 s), data, the run, up to 300 s for threads still busy after it: a safety net only.
        long limit = (long) (minutes * 60 * 1.1) + 30 + 300 + 120;
        boolean ended = child.waitFor(limit, TimeUnit.SECONDS);
        if (!ended) {
            child.destroyForcibly();
            child.waitFor();
        }
        pump.join();
        List<String> hsErr;
        try (Stream<Path> files = Files.list(dir)) {
            hsErr = files.filter(f -> f.getFileName().toString().startsWith("hs_err")).map(Path::toString).toList();
        }
        String jvm = String.format(Locale.ROOT, "soak-jvm {\"exit\":%d,\"hsErrFiles\":%d,\"ended\":%b}",
                child.exitValue(), hsErr.size(), ended);
        System.out.println(jvm);
        Files.writeString(log, jvm + System.lineSeparator(), StandardOpenOption.APPEND);
        try (Stream<Path> files = Files.list(dir)) { // the data: made again from the seed
            for (Path f : files.filter(f -> f.getFileName().toString().endsWith(".bin")).toList()) {
                Files.delete(f);
            }
        }
        assertTrue(ended, "the soak's JVM did not end within " + limit + " s (killed); its output: " + log);
        assertEquals(List.of(), hsErr, "the soak's JVM crashed: its log is in " + log);
        assertTrue(child.exitValue() == 0, "the soak's JVM exited with " + child.exitValue() + (child.exitValue() > 128
                ? " (signal " + (child.exitValue() - 128) + ": a crash)" : child.exitValue() == 3
                ? " (threads still busy long after the end: a hang, stacks in the log)" : "") + "; output in " + log);

        if ("true".equals(System.getProperty("sealpipe.test.sanitize"))) {
            // The sanitizer run: the child must have run on the instrumented library, with ASan in.
            Map<String, String> start = fields(lines, "soak-start ");
            String sanitized = Path.of(System.getProperty("sealpipe.native.library")).toRealPath().toString();
            assertEquals(sanitized, start.get("libsealpipe"),
                    "the soak's JVM must load the instrumented libsealpipe.so");
            assertTrue(start.get("libasan").contains("libasan"),
                    "the soak's JVM must run with the ASan runtime (LD_PRELOAD)");
        }
        Map<String, String> total = fields(lines, "soak-total ");
        List<String> problems = new ArrayList<>();
        for (String zero : List.of("wrongBytes", "mismatches", "unexpected", "ciphersLeftOpen")) {
            if (Long.parseLong(total.get(zero)) != 0) {
                problems.add(zero + " = " + total.get(zero));
            }
        }
        long heapStart = Long.parseLong(total.get("heapStartBytes"));
        long heapEnd = Long.parseLong(total.get("heapEndBytes"));
        if (Math.abs(heapEnd - heapStart) > heapStart / 20) {
            problems.add("the heap in use after full collections went from " + heapStart + " to " + heapEnd
                    + " bytes, more than 5 %");
        }
        if (Integer.parseInt(total.get("peakWorkers")) > Integer.parseInt(total.get("maxWorkers"))) {
            problems.add(total.get("peakWorkers") + " shared workers at once, more than Workers.MAX_THREADS "
                    + total.get("maxWorkers"));
        }
        for (Kind kind : Kind.values()) {
            Map<String, String> k = fields(lines.stream().filter(l -> l.contains("\"kind\":\"" + kind.id + "\"")
                    && l.startsWith("soak-kind ")).toList(), "soak-kind ");
            if (Long.parseLong(k.get("ops")) == 0) {
                problems.add("no " + kind.id + " operation ran");
            }
        }
        if (TestEngines.inCi()) {
            for (String engine : List.of("openssl-jni", "openssl-jna", "jce")) {
                if (!total.get("engines").contains(engine)) {
                    problems.add(engine + " did not take part (engines: " + total.get("engines") + ")");
                }
            }
        }
        List<String> found = lines.stream()
                .filter(l -> l.startsWith("soak-unexpected ") || l.startsWith("soak-mismatch "))
                .toList();
        assertEquals(List.of(), problems, "the soak (seed " + seed + ") found problems; its output is in " + log
                + "; first failures:\n" + String.join("\n", found.subList(0, Math.min(found.size(), 20))));
    }

    /** Copies the child's output to this JVM's standard output (where the sanitizer script searches) and the log. */
    private static void echo(Process child, Path log, List<String> lines) {
        try (BufferedReader in =
                        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
            for (String line; (line = in.readLine()) != null; ) {
                System.out.println(line);
                out.println(line);
                synchronized (lines) {
                    lines.add(line);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The fields of the first line starting with {@code prefix}, as strings. */
    static Map<String, String> fields(List<String> lines, String prefix) {
        String line;
        synchronized (lines) {
            line = lines.stream().filter(l -> l.startsWith(prefix)).findFirst()
                    .orElseThrow(() -> new AssertionError("the soak printed no '" + prefix.trim() + "' line"));
        }
        Map<String, String> fields = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(line);
        while (m.find()) {
            fields.put(m.group(1), m.group(3) != null ? m.group(3) : m.group(2));
        }
        return fields;
    }
}
