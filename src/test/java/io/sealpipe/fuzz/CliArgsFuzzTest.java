package io.sealpipe.fuzz;

import static io.sealpipe.fuzz.GcmStreamFuzzTest.check;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.sealpipe.cli.Main;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.snappy.SnappyStreams;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * Fuzzes the command line ({@link Main#run}) with argument arrays made of its own words (commands,
 * options, good and bad values, paths to prepared files) and arbitrary strings. Whatever the
 * arguments: {@code run} returns 0, 1 or 2 and never throws; a failure prints one
 * {@code sealpipe: } line, never a stack trace, a class name (a NullPointerException's text)
 * or a "null" message; a
 * usage error (2) never repeats the key; and a failed run leaves no output file, not even a
 * temporary one.
 *
 * <p>Skipped, as they would block, take long or write outside the test's folder: {@code encrypt}
 * and {@code decrypt} that parse and would read standard input or write standard output (the
 * test JVM's are Surefire's channel) or whose IN is not in the test's folder or OUT not in its
 * output folder (or the folder itself, a directory), and a
 * {@code speed} run whose options pass its checks (it measures for a minute).
 *
 * <p>Input: the number of arguments (u8), then each: a word of {@link #words} (u8 below their
 * count) or an arbitrary UTF-8 string (a blob). Seeds: {@link FuzzSeeds}.
 */
class CliArgsFuzzTest {
    static final String KEY = "c0ffee0fa11ed15ea5edbadc0ffee0fa11ed15ea5edbadc0ffee0fa11ed15ea5";
    static final String KEY_128 = "5eed0fa11ed15ea5edbadc0ffee0fa11";
    static final String IV = "000102030405060708090a0b0c0d0e0f";
    static final int MAX_ARGS = 12;

    @TempDir
    static Path dir;
    private static Path outDir;

    /** The words arguments are made of: {@link FuzzSeeds} refers to them by index, so only append. */
    static List<String> words;

    @BeforeAll
    static void prepareFiles() throws IOException {
        outDir = Files.createDirectories(dir.resolve("out"));
        byte[] plain = "sealpipe fuzz plaintext\n".repeat(20).getBytes(StandardCharsets.US_ASCII);
        byte[] key = HexFormat.of().parseHex(KEY);
        Path plainFile = Files.write(dir.resolve("plain.txt"), plain);
        Path gcm = dir.resolve("plain.gcm");
        try (OutputStream out = GcmStreams.builder().key(key).build().encrypt(Files.newOutputStream(gcm))) {
            out.write(plain);
        }
        Path ctr = dir.resolve("plain.ctr");
        try (OutputStream out = CtrStreams.builder().key(key).iv(HexFormat.of().parseHex(IV)).build()
                .encrypt(Files.newOutputStream(ctr))) {
            out.write(plain);
        }
        Path snappyGcm = dir.resolve("plain.snappy.gcm");
        try (OutputStream out = SnappyStreams.builder().build()
                .compress(GcmStreams.builder().key(key).build().encrypt(Files.newOutputStream(snappyGcm)))) {
            out.write(plain);
        }
        Path keyFile = Files.writeString(dir.resolve("key.hex"), KEY + "\n");
        Path keyRaw = Files.write(dir.resolve("key16.bin"), HexFormat.of().parseHex(KEY_128));
        Path badKey = Files.writeString(dir.resolve("bad.key"), "not a key");
        words = List.of(
                // 0: commands and help
                "encrypt", "decrypt", "info", "speed", "--help", "-h", "--version", "-V", "help", "",
                // 10: cipher options
                "--mode", "gcm", "ctr", "--aes", "128", "256", "192", "--key-hex", KEY, KEY_128,
                // 20
                "--key-file", keyFile.toString(), keyRaw.toString(), badKey.toString(), "--iv-hex", IV,
                "--context-hex", "00ff", "zz", "--engine",
                // 30
                "auto", "jce", "openssl-jni", "openssl-jna", "none", "--compress", "snappy", "--threads", "0", "1",
                // 40
                "2", "65", "-1", "--raw", "--json", "--seconds", "0.001", "61", "NaN", "--chart",
                // 50: paths: inputs, outputs, a directory, a missing file, standard input/output
                plainFile.toString(), gcm.toString(), ctr.toString(), snappyGcm.toString(),
                outDir.resolve("result").toString(), outDir.resolve("result.png").toString(), dir.toString(), "/",
                dir.resolve("missing").toString(), "-",
                // 60: odd forms
                "--", "--key-hex=" + KEY, "--mode=ctr", "-h=1", "--threads=", "x.txt", "/nonexistent/dir/x.png",
                "gcm-stream", "cfb", "all");
    }

    @FuzzTest(maxDuration = "5m")
    void run(byte[] data) throws IOException {
        FuzzInput in = new FuzzInput(data);
        int count = in.u8() % (MAX_ARGS + 1);
        String[] args = new String[count];
        for (int i = 0; i < count; i++) {
            int w = in.u8();
            args[i] = w < words.size() ? words.get(w) : new String(in.blob(), StandardCharsets.UTF_8);
        }
        if (wouldBlockOrRunLong(args)) {
            return;
        }
        String what = "sealpipe " + String.join(" ", args);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code;
        try {
            code = Main.run(args, new PrintWriter(out), new PrintWriter(err));
        } catch (RuntimeException | Error e) {
            throw new AssertionError(what + ": threw", e);
        }
        String errText = err.toString();
        check(code == 0 || code == 1 || code == 2, what + ": exit code " + code);
        // Paths are printed back (cannot read input PATH): only the rest is sealpipe's own words.
        String own = errText;
        for (String arg : args) {
            own = arg.length() < 3 ? own : own.replace(arg, "<arg>");
        }
        check(!own.contains("\tat ") && !own.contains("Exception") && !own.contains("java."),
                what + ": a stack trace, an exception's or a class's name on standard error: " + errText);
        if (code != 0) {
            List<String> lines = own.lines().filter(l -> !l.startsWith("sealpipe: warning: ")).toList();
            check(lines.size() == 1 && lines.get(0).startsWith("sealpipe: ") && lines.get(0).length() > 15,
                    what + ": exit " + code + " without one sealpipe: line saying why: " + errText);
            check(!own.contains(": null"), what + ": exit " + code + " with a null message: " + errText);
            try (Stream<Path> left = Files.list(outDir)) {
                List<Path> files = left.toList();
                check(files.isEmpty(), what + ": exit " + code + " left " + files);
            }
        }
        if (code == 2) {
            for (String key : List.of(KEY, KEY_128)) {
                for (int i = 0; i + 8 <= key.length(); i++) {
                    check(!errText.toLowerCase(Locale.ROOT).contains(key.substring(i, i + 8)),
                            what + ": a usage error repeats part of the key: " + errText);
                }
            }
        }
        clean(outDir);
    }

    /**
     * Whether these arguments parse into a run that reads standard input, writes standard output
     * or measures speed: the cases this test cannot run (see the class comment).
     */
    private static boolean wouldBlockOrRunLong(String[] args) {
        ParseResult main;
        try {
            main = new CommandLine(new Main()).parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            return false; // a usage error: Main.run stops there too
        }
        ParseResult sub = main.subcommand();
        if (main.isUsageHelpRequested() || main.isVersionHelpRequested() || sub == null
                || sub.isUsageHelpRequested() || sub.isVersionHelpRequested()) {
            return false;
        }
        switch (sub.commandSpec().name()) {
            case "encrypt", "decrypt" -> {
                // Only the prepared files: an arbitrary OUT would be written where it points (as
                // root, anywhere), an arbitrary IN could be a device that never ends. A path with
                // a NUL is no file at all: it fails before anything is opened.
                String inPath = sub.matchedPositionalValue(0, "-");
                String outPath = sub.matchedPositionalValue(1, "-");
                return !isSafe(inPath, dir) || !(isSafe(outPath, outDir) || outPath.equals(dir.toString()));
            }
            case "speed" -> {
                double seconds = sub.matchedOptionValue("--seconds", 0.25);
                List<String> modes = sub.matchedOptionValue("--mode", null);
                Path chart = sub.matchedOptionValue("--chart", null);
                boolean badModes = modes != null && !MEASURED_MODES.containsAll(modes);
                boolean badChart = chart != null && (chart.getFileName() == null
                        || !chart.getFileName().toString().matches("(?i).*\\.(png|svg)"));
                return seconds >= 0.01 && seconds <= 60 && !badModes && !badChart;
            }
            default -> {
                return false;
            }
        }
    }

    /** Whether {@code path} is in {@code folder}, or has a NUL. */
    private static boolean isSafe(String path, Path folder) {
        return path.indexOf('\0') >= 0 || !path.equals("-") && Path.of(path).toAbsolutePath().normalize().startsWith(folder)
                && !Path.of(path).toAbsolutePath().normalize().equals(folder);
    }

    private static final Set<String> MEASURED_MODES = Set.of("gcm-stream", "ctr-stream", "gcm", "ctr", "cfb",
            "hmac-sha256", "cfb+hmac-sha256", "snappy+gcm-write", "gcm+snappy-read");

    private static void clean(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.delete(f);
            }
        }
    }
}
