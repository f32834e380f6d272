package io.sealpipe.engine;

import io.sealpipe.internal.Log;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Gets one operation of a slow-starting engine ready on a background thread, started once the
 * operation has been in use for {@value #START_AFTER_MILLIS} ms (at its first use if there is no
 * bridge), while another engine (the bridge) runs its calls.
 *
 * <ul>
 *   <li><b>jce</b>: HotSpot uses its AES intrinsics only once C2 has compiled the provider's
 *       methods, after thousands of calls; until then SunJCE runs AES-GCM at about 30 MB/s. The
 *       warm-up makes small calls on scratch data (a random key that is never used for data),
 *       which gets C2 there far sooner than a stream's large calls. With a bridge, it then times
 *       the same 16 KiB calls on both engines and is ready once jce is at least as fast: so a
 *       switch never slows a stream down, and a rule that was wrong for this host (intrinsics
 *       turned off by JVM flags, say) costs a few seconds of one background thread, not the
 *       stream's speed. Without a bridge (jce forced, or the only engine) it just compiles.
 *   <li><b>accp</b>: its first use extracts and loads a 10 MB native library (about 0.3 s); the
 *       warm-up loads it, and is ready when it loaded and passed its self-check.
 * </ul>
 *
 * <p>What happened is logged at INFO (or WARN when the chosen engine could not be used) with
 * the time it took and the speeds measured.
 */
final class Warmup {
    private static final Log LOG = Log.of(Warmup.class);

    /** How long a jce warm-up may try before the bridge keeps the operation for good. */
    static final long LIMIT_NANOS = TimeUnit.SECONDS.toNanos(3);

    /** How long an operation runs on the bridge before its warm-up starts, in ms. */
    static final long START_AFTER_MILLIS = 100;

    private static final long START_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(START_AFTER_MILLIS);

    /** Small calls between two timings: enough to move C2 along, short enough to time often. */
    private static final int SMALL_CALLS = 2000;

    /** The bytes of one timing: four 16 KiB calls, the size of a stream's calls. */
    private static final int TIMED_CALLS = 4;

    private enum State { PENDING, READY, FAILED }

    private final Operation op;
    private final Supplier<CryptoEngine> engine;
    private final EngineKind kind;
    private final CryptoEngine bridge;
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile State state = State.PENDING;
    private boolean used;   // guarded by this, with firstUse: the operation's first call was made
    private long firstUse;  // System.nanoTime() of that call

    /**
     * @param op the operation to get ready
     * @param kind the engine's kind
     * @param engine gets the engine (for accp this is the slow load)
     * @param bridge the engine that runs the operation meanwhile, or null if none does
     */
    Warmup(Operation op, EngineKind kind, Supplier<CryptoEngine> engine, CryptoEngine bridge) {
        this.op = op;
        this.kind = kind;
        this.engine = engine;
        this.bridge = bridge;
    }

    /** Whether the engine may take over from the bridge now. */
    boolean ready() {
        return state == State.READY;
    }

    /** For tests: the warm-up then never starts its thread; the test calls {@link #run()} when it wants. */
    Warmup withoutThread() {
        started.set(true);
        return this;
    }

    /** Whether the warm-up has ended, ready or failed (a failed engine never takes over). */
    boolean done() {
        return state != State.PENDING;
    }

    /**
     * Whether the engine may take over; starts the warm-up when it is due: at once without a
     * bridge, else at the first call {@value #START_AFTER_MILLIS} ms after the operation's first.
     */
    boolean readyOrStart() {
        if (state == State.PENDING && !started.get() && due() && started.compareAndSet(false, true)) {
            Thread t = new Thread(this::run, "sealpipe-warmup-" + kind.id() + "-" + op.id());
            t.setDaemon(true);
            t.setPriority(Thread.NORM_PRIORITY - 1);
            t.start();
        }
        return state == State.READY;
    }

    /**
     * Whether the warm-up may start. With a bridge, the operation runs at the bridge's speed
     * meanwhile, and a warm-up pays off only for work that lasts longer than the warm-up (jce:
     * 0.1 s or more, accp: 0.3 s); until then it competes with that work for the CPU (its thread,
     * and for jce the C2 compiles it causes): on 2 CPUs, short jobs ran 10-15 % slower on auto
     * than on the bridge alone. So it waits until the operation has been in use for a while.
     */
    private synchronized boolean due() {
        if (bridge == null) {
            return true;
        }
        long now = System.nanoTime();
        if (!used) {
            used = true;
            firstUse = now;
            return false;
        }
        return now - firstUse >= START_AFTER_NANOS;
    }

    /** Runs the warm-up on this thread (the background thread's body; tests call it directly). */
    void run() {
        long start = System.nanoTime();
        try {
            CryptoEngine target = engine.get();
            if (kind == EngineKind.JCE) {
                warmJce(target, start);
            } else {
                state = State.READY;
                LOG.info("sealpipe {}: {} ready after {} ms{}", op.id(), kind.id(), millis(start),
                        bridge == null ? "" : "; it takes over from " + bridge.name());
            }
        } catch (RuntimeException | GeneralSecurityException | LinkageError e) {
            state = State.FAILED;
            LOG.warn("sealpipe {}: {} could not be made ready ({}){}", op.id(), kind.id(), e.toString(),
                    bridge == null ? "" : "; " + bridge.name() + " keeps running it");
        }
    }

    private void warmJce(CryptoEngine target, long start) throws GeneralSecurityException {
        try (Workload jce = Workload.of(op, target); Workload other = bridge == null ? null : Workload.of(op, bridge)) {
            long jceNanos = 0;
            long otherNanos = 0;
            for (int round = 1; System.nanoTime() - start < LIMIT_NANOS; round++) {
                for (int i = 0; i < SMALL_CALLS; i++) {
                    jce.small();
                }
                if (other == null) {
                    if (round == 10) { // 20,000 small calls: C2 has had its chance
                        state = State.READY;
                        LOG.info("sealpipe {}: jce warmed up in the background in {} ms", op.id(), millis(start));
                        return;
                    }
                    continue;
                }
                jceNanos = best(jce);
                otherNanos = best(other);
                if (jceNanos <= otherNanos) {
                    state = State.READY;
                    LOG.info("sealpipe {}: jce warm after {} ms ({} MB/s against {}'s {} MB/s on 16 KiB calls);"
                            + " it takes over from {}", op.id(), millis(start), mbps(jceNanos), bridge.name(),
                            mbps(otherNanos), bridge.name());
                    return;
                }
            }
            state = State.FAILED;
            LOG.info("sealpipe {}: jce did not reach {}'s speed within {} s ({} against {} MB/s on 16 KiB calls);"
                    + " {} keeps running it", op.id(), bridge == null ? "?" : bridge.name(),
                    TimeUnit.NANOSECONDS.toSeconds(LIMIT_NANOS), mbps(jceNanos), mbps(otherNanos),
                    bridge == null ? "jce" : bridge.name());
        }
    }

    private static long best(Workload w) {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long t0 = System.nanoTime();
            for (int j = 0; j < TIMED_CALLS; j++) {
                w.large();
            }
            best = Math.min(best, System.nanoTime() - t0);
        }
        return best;
    }

    private static long mbps(long nanos) {
        return nanos == 0 ? 0 : (long) TIMED_CALLS * Workload.LARGE * 1000L / nanos;
    }

    private static long millis(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    /** Calls of one operation on scratch data: a random key and nonces used for nothing else. */
    abstract static class Workload implements AutoCloseable {
        static final int SMALL = 256;
        static final int LARGE = AeadCipher.CHUNK_SIZE;

        final byte[] in = new byte[LARGE + AeadCipher.TAG_LENGTH];
        final byte[] out = new byte[LARGE + AeadCipher.TAG_LENGTH];

        abstract void small();

        abstract void large();

        @Override
        public abstract void close();

        static Workload of(Operation op, CryptoEngine engine) throws GeneralSecurityException {
            SecureRandom random = new SecureRandom();
            byte[] key = new byte[32];
            random.nextBytes(key);
            byte[] iv = new byte[16];
            try {
                return switch (op) {
                    case CTR, CFB -> streamCipher(op == Operation.CTR ? engine.newAesCtr(key, iv)
                            : engine.newAesCfb(key, iv, true));
                    case GCM_SEAL, GCM_OPEN -> gcm(engine.newAesGcm(key), op == Operation.GCM_OPEN);
                    case HMAC_SHA256 -> hmac(engine.newHmacSha256(key));
                };
            } finally {
                java.util.Arrays.fill(key, (byte) 0);
            }
        }

        private static Workload streamCipher(StreamCipher c) {
            return new Workload() {
                @Override
                void small() {
                    c.update(in, 0, SMALL, out, 0);
                }

                @Override
                void large() {
                    c.update(in, 0, LARGE, out, 0);
                }

                @Override
                public void close() {
                    c.close();
                }
            };
        }

        private static Workload hmac(Hmac h) {
            return new Workload() {
                @Override
                void small() {
                    h.update(in, 0, SMALL);
                    h.doFinal(out, 0);
                }

                @Override
                void large() {
                    h.update(in, 0, LARGE);
                    h.doFinal(out, 0);
                }

                @Override
                public void close() {
                    h.close();
                }
            };
        }

        /** Seals with fresh nonces (a counter); opening opens messages it sealed first. */
        private static Workload gcm(AeadCipher c, boolean open) {
            return new Workload() {
                private final byte[] nonce = new byte[AeadCipher.NONCE_LENGTH];
                private final byte[] sealedSmall = new byte[SMALL + AeadCipher.TAG_LENGTH];
                private final byte[] smallNonce = new byte[AeadCipher.NONCE_LENGTH];
                private final byte[] sealedChunk = new byte[AeadCipher.SEALED_CHUNK_SIZE];
                private final byte[] chunkNonce = new byte[AeadCipher.NONCE_LENGTH];
                private long counter;

                {
                    if (open) {
                        c.seal(next(smallNonce), null, in, 0, SMALL, sealedSmall, 0);
                        c.sealChunks(next(chunkNonce), 0, in, 0, 1, sealedChunk, 0);
                    }
                }

                private byte[] next(byte[] into) {
                    counter++;
                    for (int i = 0; i < 8; i++) {
                        into[i] = (byte) (counter >>> (8 * i));
                    }
                    return into;
                }

                @Override
                void small() {
                    if (open) {
                        open(smallNonce, sealedSmall);
                    } else {
                        c.seal(next(nonce), null, in, 0, SMALL, out, 0);
                    }
                }

                @Override
                void large() {
                    if (open) {
                        if (c.openChunks(chunkNonce, 0, sealedChunk, 0, 1, out, 0) != 1) {
                            throw new IllegalStateException("cannot open a chunk it sealed");
                        }
                    } else {
                        c.sealChunks(next(nonce), 0, in, 0, 1, out, 0);
                    }
                }

                private void open(byte[] n, byte[] sealed) {
                    try {
                        c.open(n, null, sealed, 0, sealed.length, out, 0);
                    } catch (javax.crypto.AEADBadTagException e) {
                        throw new IllegalStateException("cannot open a message it sealed", e);
                    }
                }

                @Override
                public void close() {
                    c.close();
                }
            };
        }
    }
}
