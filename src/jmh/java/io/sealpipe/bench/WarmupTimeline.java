package io.sealpipe.bench;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmStreams;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * How soon a stream reaches its warm speed from a cold JVM: the time until its throughput,
 * measured in 20 ms windows, first reaches 80 % of its warm speed (the median of its last
 * second) and stays there for five windows. Not a JMH benchmark (JMH measures warm or
 * single-shot); run it in a fresh JVM per measurement, with the engine settings as system
 * properties, for example before and after the background warm-up of jce:
 *
 * <pre>
 * java -Dsealpipe.engine=jce -Dsealpipe.engine.warmup=false -cp ... io.sealpipe.bench.WarmupTimeline ctr 3
 * java -Dsealpipe.engine=jce -cp ... io.sealpipe.bench.WarmupTimeline ctr 3
 * </pre>
 *
 * Prints one JSON object: mode, seconds run, warm MB/s, ms to 80 %, MB written by then.
 */
public final class WarmupTimeline {
    private static final long WINDOW_NANOS = 20_000_000L;
    private static final int WRITE = 64 * 1024;

    private WarmupTimeline() {}

    public static void main(String[] args) throws IOException {
        String mode = args.length > 0 ? args[0] : "ctr";
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3;
        byte[] key = Fixtures.bytes(Fixtures.KEY_LENGTH, 1);
        byte[] plain = Fixtures.bytes(WRITE, 4);
        List<Double> rates = new ArrayList<>(); // MB/s per window
        long start = System.nanoTime();
        Fixtures.DiscardingSink sink = new Fixtures.DiscardingSink();
        OutputStream out = mode.equals("ctr")
                ? CtrStreams.builder().key(key).iv(new byte[16]).parallelism(1).build().encrypt(sink)
                : GcmStreams.builder().key(key).parallelism(1).build().encrypt(sink);
        long end = start + (long) (seconds * 1e9);
        long windowStart = start; // the first window holds engine selection and the stream's creation
        long windowBytes = 0;
        try (out) {
            while (true) {
                out.write(plain, 0, WRITE);
                windowBytes += WRITE;
                long now = System.nanoTime();
                if (now - windowStart >= WINDOW_NANOS) {
                    rates.add(windowBytes * 1e3 / (now - windowStart));
                    windowStart = now;
                    windowBytes = 0;
                    if (now >= end) {
                        break;
                    }
                }
            }
        }
        int lastSecond = (int) Math.min(rates.size(), 1e9 / WINDOW_NANOS);
        List<Double> tail = new ArrayList<>(rates.subList(rates.size() - lastSecond, rates.size()));
        tail.sort(null);
        double warm = tail.get(tail.size() / 2);
        int reached = -1;
        for (int i = 0; i + 5 <= rates.size() && reached < 0; i++) {
            boolean stays = true;
            for (int j = i; j < i + 5; j++) {
                stays &= rates.get(j) >= 0.8 * warm;
            }
            if (stays) {
                reached = i;
            }
        }
        double mbBefore = 0;
        for (int i = 0; i < reached; i++) {
            mbBefore += rates.get(i) * WINDOW_NANOS / 1e9;
        }
        System.out.printf("{\"mode\":\"%s\",\"engine\":\"%s\",\"warmup\":\"%s\",\"seconds\":%.1f,\"warm_mbps\":%.0f,"
                + "\"ms_to_80_percent\":%d,\"mb_before_80_percent\":%.0f}%n", mode,
                System.getProperty("sealpipe.engine", "auto"), System.getProperty("sealpipe.engine.warmup", "true"),
                seconds, warm, reached < 0 ? -1 : reached * WINDOW_NANOS / 1_000_000, mbBefore);
    }
}
