package io.sealpipe.cli;

import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.Engines;
import java.io.PrintStream;
import java.util.Locale;

/**
 * The other JVM of {@code sealpipe speed}'s AES-NI seeds: started by {@link SpeedSeeds} with
 * AES-NI hidden from OpenSSL ({@code OPENSSL_ia32cap}) or HotSpot's AES intrinsics switched off,
 * it measures the modes it is given and prints one line per mode, {@code <mode> <MB/s>}.
 *
 * <pre>
 * java -cp ... io.sealpipe.cli.SpeedChild WARMUP_NANOS MEASURE_NANOS REPEATS ENGINE SIZE MODE...
 * </pre>
 */
public final class SpeedChild {
    private SpeedChild() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        long warmup = Long.parseLong(args[0]);
        long measure = Long.parseLong(args[1]);
        int repeats = Integer.parseInt(args[2]);
        CryptoEngine engine = Engines.forName(args[3]);
        int size = Integer.parseInt(args[4]);
        PrintStream out = System.out;
        for (int i = 5; i < args.length; i++) {
            SpeedWorkloads.Mode mode = SpeedWorkloads.Mode.fromId(args[i]);
            try (SpeedWorkloads.Op op = SpeedWorkloads.create(mode, engine, size)) {
                double mbps = SpeedWorkloads.measure(op, size, warmup, measure, repeats);
                out.println(mode.id + " " + String.format(Locale.ROOT, "%.3f", mbps));
            }
        }
        out.flush();
    }
}
