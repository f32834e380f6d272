package io.sealpipe;

/**
 * The {@code parallelism} setting of the stream builders: how many threads may work on one
 * stream, its own thread and, above 1, the shared daemon workers of sealpipe (named
 * {@code sealpipe-worker-N}, at most one per available processor, ending when idle). Streams
 * wait for their workers before {@code close()} returns, and the bytes a stream writes are the
 * same whatever the setting.
 *
 * <p>Parallelism helps a job that has fewer busy streams than cores (one large file, a shuffle
 * fetch). Where the application already keeps every core busy with streams of its own (a Spark
 * executor running one task per core), give the streams {@code parallelism(1)}: the workers would
 * only compete with the tasks.
 */
public final class Parallelism {
    private Parallelism() {}

    /** The most a builder accepts. */
    public static final int MAX = 64;

    /** The default: the available processors, at most 8. */
    public static final int DEFAULT = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), 8));

    /** Returns {@code parallelism} if it is 1..{@link #MAX}. */
    static int check(int parallelism) {
        if (parallelism < 1 || parallelism > MAX) {
            throw new IllegalArgumentException("parallelism must be 1.." + MAX + ", not " + parallelism);
        }
        return parallelism;
    }
}
