package io.sealpipe.cli;

import io.sealpipe.cli.SpeedWorkloads.Mode;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Platform;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The founding measurements that {@code sealpipe speed} reproduces, each as a ratio measured
 * here next to the ratio reported:
 *
 * <ul>
 *   <li>IMPALA-6128 (OpenSSL, 2017): GCM about 10× CFB + SHA-256 (2.3 vs 0.22 GB/s), CTR about
 *       7.5× CFB (3.2 vs 0.43 GB/s);
 *   <li>Intel's Hadoop encryption work: AES-NI made encryption 5.3× and decryption 19.8× faster,
 *       and the compress-then-encrypt write and read paths 1.5× and 3.3×.
 * </ul>
 *
 * "AES-NI off" is measured in a second JVM: for OpenSSL with AES-NI and its companion bits
 * hidden through {@code OPENSSL_ia32cap=~0x200000200000000:~0x0} (the {@code :~0x0} keeps the
 * second word, SHA-NI and AVX2, which OpenSSL 3 would otherwise clear too), for SunJCE (the jce
 * engine) with HotSpot's AES intrinsics switched off. On aarch64 the OpenSSL run hides the ARMv8
 * AES instructions with {@code OPENSSL_armcap=0} (OpenSSL's Arm capability word: no NEON, AES,
 * PMULL or SHA), and the seeds are named "ARMv8 AES on / off"; on other CPUs OpenSSL's run is
 * left out, since no mask is known to take its AES off the hardware there.
 */
final class SpeedSeeds {
    private SpeedSeeds() {}

    /** The size the seeds compare at: 16 KiB calls. */
    static final int SIZE = 16 * 1024;

    /** The OpenSSL capability mask that hides AES-NI (and PCLMULQDQ, AVX for AES) from OpenSSL. */
    static final String OPENSSL_NO_AESNI = "~0x200000200000000:~0x0";

    /** The environment that hides hardware AES from OpenSSL on an architecture, or null if none is known. */
    static String opensslNoHardwareAes(String arch) {
        return Platform.isX86(arch) ? "OPENSSL_ia32cap=" + OPENSSL_NO_AESNI
                : arch.equals(Platform.AARCH64) ? "OPENSSL_armcap=0" : null;
    }

    /** HotSpot flags that take SunJCE's AES (and GHASH) off the hardware. */
    static final List<String> JVM_NO_AES = List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:-UseAES",
            "-XX:-UseAESIntrinsics", "-XX:-UseAESCTRIntrinsics", "-XX:-UseGHASHIntrinsics");

    /** One reproduced ratio. */
    record Seed(String name, double measured, double reported, String source, String how) {}

    /**
     * A cell of the table: throughput of a mode on an engine at a size.
     *
     * @param engine an engine id, or {@code auto}
     */
    record Cell(Mode mode, String engine, int size) {}

    /** What a measurement needs: the timing, and where to run this JVM's classes again. */
    record Timing(long warmupNanos, long measureNanos, int repeats) {}

    /**
     * The ratios from the table ({@code rows}) and, if asked, from a second JVM without AES-NI.
     *
     * @param engines the engines of the table, not counting auto
     * @param reference the column the table's ratios are taken from
     */
    static List<Seed> reproduce(Map<Cell, Double> rows, List<EngineKind> engines, String reference, Timing timing,
            Measurer measurer, boolean withAesNiOff) throws IOException {
        List<Seed> seeds = new ArrayList<>();
        EngineKind openssl = engines.stream().filter(EngineKind::isOpenSsl).findFirst().orElse(null);
        ratio(seeds, rows, new Cell(Mode.GCM, reference, SIZE), new Cell(Mode.CFB_HMAC_SHA256, reference, SIZE),
                "GCM / CFB+HMAC-SHA256", 10.0, "IMPALA-6128 (2.3 vs 0.22 GB/s)");
        ratio(seeds, rows, new Cell(Mode.CTR, reference, SIZE), new Cell(Mode.CFB, reference, SIZE),
                "CTR / CFB", 7.5, "IMPALA-6128 (3.2 vs 0.43 GB/s)");
        if (!withAesNiOff) {
            return seeds;
        }
        String arch = Platform.current().arch();
        String noHardwareAes = opensslNoHardwareAes(arch);
        if (openssl != null && noHardwareAes != null) {
            String aes = Platform.isX86(arch) ? "AES-NI" : "ARMv8 AES";
            Map<Mode, Double> on = onHere(rows, measurer, openssl, Mode.CTR_STREAM, Mode.CTR_STREAM_READ,
                    Mode.SNAPPY_GCM_WRITE, Mode.GCM_SNAPPY_READ);
            Map<Mode, Double> off = child(timing, openssl, List.of(noHardwareAes), List.of(),
                    Mode.CTR_STREAM, Mode.CTR_STREAM_READ, Mode.SNAPPY_GCM_WRITE, Mode.GCM_SNAPPY_READ);
            String how = openssl.id() + ", 16 KiB, " + aes + " hidden from OpenSSL in a second JVM (" + noHardwareAes + ")";
            seeds.add(new Seed(aes + " on / off, encryption (CTR stream)", on.get(Mode.CTR_STREAM) / off.get(Mode.CTR_STREAM),
                    5.3, "Intel", how));
            seeds.add(new Seed(aes + " on / off, decryption (CTR stream)",
                    on.get(Mode.CTR_STREAM_READ) / off.get(Mode.CTR_STREAM_READ), 19.8, "Intel", how));
            seeds.add(new Seed(aes + " on / off, compress+encrypt write (snappy+gcm)",
                    on.get(Mode.SNAPPY_GCM_WRITE) / off.get(Mode.SNAPPY_GCM_WRITE), 1.5, "Intel", how));
            seeds.add(new Seed(aes + " on / off, decrypt+decompress read (gcm+snappy)",
                    on.get(Mode.GCM_SNAPPY_READ) / off.get(Mode.GCM_SNAPPY_READ), 3.3, "Intel", how));
        }
        if (engines.contains(EngineKind.JCE)) {
            Map<Mode, Double> on = onHere(rows, measurer, EngineKind.JCE, Mode.CTR_STREAM, Mode.CTR_STREAM_READ);
            Map<Mode, Double> off = child(timing, EngineKind.JCE, List.of(), JVM_NO_AES, Mode.CTR_STREAM,
                    Mode.CTR_STREAM_READ);
            String how = "jce (SunJCE), 16 KiB, HotSpot's AES intrinsics off in a second JVM (" + String.join(" ", JVM_NO_AES)
                    + ")";
            seeds.add(new Seed("AES intrinsics on / off, encryption (CTR stream, SunJCE)",
                    on.get(Mode.CTR_STREAM) / off.get(Mode.CTR_STREAM), 5.3, "Intel", how));
            seeds.add(new Seed("AES intrinsics on / off, decryption (CTR stream, SunJCE)",
                    on.get(Mode.CTR_STREAM_READ) / off.get(Mode.CTR_STREAM_READ), 19.8, "Intel", how));
        }
        return seeds;
    }

    private static void ratio(List<Seed> seeds, Map<Cell, Double> rows, Cell a, Cell b, String name, double reported,
            String source) {
        Double x = rows.get(a);
        Double y = rows.get(b);
        if (x != null && y != null) {
            seeds.add(new Seed(name, x / y, reported, source, a.engine() + ", 16 KiB calls, from the table"));
        }
    }

    /** Measures one cell in this JVM. */
    interface Measurer {
        double measure(Mode mode, String engine, int size) throws IOException;
    }

    /** The figures with AES-NI: from the table where it has them, else measured now. */
    private static Map<Mode, Double> onHere(Map<Cell, Double> rows, Measurer measurer, EngineKind engine, Mode... modes)
            throws IOException {
        Map<Mode, Double> on = new EnumMap<>(Mode.class);
        for (Mode m : modes) {
            Double v = rows.get(new Cell(m, engine.id(), SIZE));
            on.put(m, v != null ? v : measurer.measure(m, engine.id(), SIZE));
        }
        return on;
    }

    /** Measures {@code modes} in a second JVM with the given environment and JVM options. */
    static Map<Mode, Double> child(Timing timing, EngineKind engine, List<String> env, List<String> jvmOptions,
            Mode... modes) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED"); // Java 24+ warns at the JNI load otherwise
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        for (String p : List.of("sealpipe.native.library", "sealpipe.openssl.libcrypto", "sealpipe.jce.provider")) {
            if (System.getProperty(p) != null) {
                command.add("-D" + p + "=" + System.getProperty(p));
            }
        }
        command.add(SpeedChild.class.getName());
        command.add(Long.toString(timing.warmupNanos()));
        command.add(Long.toString(timing.measureNanos()));
        command.add(Integer.toString(timing.repeats()));
        command.add(engine.id());
        command.add(Integer.toString(SIZE));
        for (Mode m : modes) {
            command.add(m.id);
        }
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        for (String kv : env) {
            int eq = kv.indexOf('=');
            pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        Process process = pb.start();
        process.getOutputStream().close();
        Map<Mode, Double> results = new EnumMap<>(Mode.class);
        StringBuilder output = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                output.append(line).append('\n');
                String[] parts = line.trim().split(" ");
                if (parts.length == 2) {
                    try {
                        results.put(Mode.fromId(parts[0]), Double.parseDouble(parts[1]));
                    } catch (IllegalArgumentException notAResult) {
                        // a log line
                    }
                }
            }
        }
        try {
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IOException("the second JVM for the AES-NI-off seeds did not finish in 5 minutes");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("interrupted while waiting for the second JVM", e);
        }
        for (Mode m : modes) {
            if (!results.containsKey(m)) {
                throw new IOException("the second JVM (" + String.join(" ", jvmOptions) + " " + String.join(" ", env)
                        + ") gave no figure for " + m.id + " on " + engine.id() + "; it printed: "
                        + output.toString().strip().replace('\n', ' '));
            }
        }
        return results;
    }
}
