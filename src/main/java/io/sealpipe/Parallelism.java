package io.sealpipe;

import java.util.Locale;

/**
 * The {@code parallelism} and {@code executor} settings of the stream builders: how many threads
 * may work on one stream, and where the helping threads come from.
 *
 * <p>The default is <b>1</b>: a stream works on its caller's thread only and starts no thread,
 * which is what a Spark or MapReduce task that already owns one core expects. Raise it for a
 * job that has fewer busy streams than cores (one large file, a shuffle fetch) with the
 * builders' {@code parallelism(n)}, or for every stream of the JVM with the system property
 * {@value #PROPERTY} ({@code -Dsealpipe.parallelism=4}, or {@code auto} for the available
 * processors, at most 8). The bytes a stream writes are the same whatever the setting, and
 * streams wait for their helpers before {@code close()} returns.
 *
 * <p>Above 1, helper tasks run on the builder's {@code executor(...)} if one was given (the
 * application's own threads), or else on sealpipe's shared daemon threads (named {@code
 * sealpipe-worker-N}, at most one per available processor, ending after 2 s idle). Either way
 * the stream's own thread finishes whatever no helper took, so a busy executor slows a stream
 * down but never blocks it.
 */
public final class Parallelism {
    private Parallelism() {}

    /** The system property that sets the default parallelism of every stream builder. */
    public static final String PROPERTY = "sealpipe.parallelism";

    /** The most a builder accepts. */
    public static final int MAX = 64;

    /** What {@code auto} means: the available processors, at most 8. */
    public static final int AUTO = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), 8));

    /**
     * The default for a new builder: {@value #PROPERTY} if set, else 1.
     *
     * @return the parallelism, 1..{@link #MAX}
     * @throws IllegalArgumentException if the property is set to something other than {@code
     *     auto} or a number 1..{@link #MAX}
     */
    public static int defaultParallelism() {
        String value = System.getProperty(PROPERTY);
        if (value == null || value.isBlank()) {
            return 1;
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("auto")) {
            return AUTO;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1 && n <= MAX) {
                return n;
            }
        } catch (NumberFormatException e) {
            // the message below says what is accepted
        }
        throw new IllegalArgumentException(PROPERTY + "=" + value + " is not understood: use auto or a number 1.." + MAX);
    }
}
