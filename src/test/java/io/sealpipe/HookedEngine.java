package io.sealpipe;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.ForwardingAeadCipher;
import io.sealpipe.engine.ForwardingEngine;
import io.sealpipe.engine.ForwardingStreamCipher;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.gcm.GcmInternals;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.AEADBadTagException;

/**
 * A real engine with five things added for race tests: a hook that runs inside the next AES-CTR
 * or AES-GCM cipher creation on a chosen thread, after the caller handed over the key array and
 * before the real engine reads it (so a test can place another thread's whole step exactly
 * there); a hook that runs at the start of every {@code openChunks} of its GCM ciphers, on
 * whichever thread opens them (so a test can hold a worker in the middle of a batch); one that
 * runs when such an {@code openChunks} has returned (the plaintext written, the real cipher
 * free again); one at the start of every single-chunk {@code open} (a final chunk, a positioned
 * read's chunk); and counts of the CTR and GCM ciphers made and closed, so a test sees a cipher
 * left unclosed.
 */
public final class HookedEngine extends ForwardingEngine {
    private final AtomicInteger made = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    private volatile Thread hookThread;
    private volatile Runnable hook;
    private volatile OpenHook openHook;
    private volatile OpenHook openedHook;
    private volatile Runnable singleOpenHook;

    /** Runs at the start of {@code openChunks} ({@link #onOpenChunks}) or at its end ({@link #onOpenedChunks}). */
    public interface OpenHook {
        void opening(long firstChunk, int count);
    }

    public HookedEngine(CryptoEngine real) {
        super(real);
    }

    /** Runs {@code hook} once, inside the next CTR or GCM cipher creation on {@code thread}. */
    public void beforeNextCipher(Thread thread, Runnable hook) {
        this.hook = hook;
        this.hookThread = thread;
    }

    /** Runs {@code hook} at the start of every {@code openChunks} of the GCM ciphers made by this engine. */
    public void onOpenChunks(OpenHook hook) {
        this.openHook = hook;
    }

    /**
     * Runs {@code hook} at the end of every {@code openChunks} of the GCM ciphers made by this
     * engine, once the real one returned.
     */
    public void onOpenedChunks(OpenHook hook) {
        this.openedHook = hook;
    }

    /** Runs {@code hook} at the start of every single-chunk {@code open} of the GCM ciphers made by this engine. */
    public void onOpen(Runnable hook) {
        this.singleOpenHook = hook;
    }

    private void runSingleOpenHook() {
        Runnable h = singleOpenHook;
        if (h != null) {
            h.run();
        }
    }

    private void runOpenHook(long firstChunk, int count) {
        OpenHook h = openHook;
        if (h != null) {
            h.opening(firstChunk, count);
        }
    }

    private int runOpenedHook(long firstChunk, int count, int opened) {
        OpenHook h = openedHook;
        if (h != null) {
            h.opening(firstChunk, count);
        }
        return opened;
    }

    /** CTR and GCM ciphers made and not closed yet. */
    public int open() {
        return made.get() - closed.get();
    }

    private void runHook() {
        if (Thread.currentThread() == hookThread) {
            hookThread = null;
            hook.run();
        }
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        runHook();
        StreamCipher cipher = real.newAesCtr(key, iv);
        made.incrementAndGet();
        return new CountedStreamCipher(cipher);
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        runHook();
        AeadCipher cipher = real.newAesGcm(key);
        made.incrementAndGet();
        return new CountedAeadCipher(cipher);
    }

    /** Counts the first close of one cipher. */
    private final class CloseCount {
        private final AtomicBoolean done = new AtomicBoolean();

        void closing() {
            if (done.compareAndSet(false, true)) {
                closed.incrementAndGet();
            }
        }
    }

    private final class CountedStreamCipher extends ForwardingStreamCipher {
        private final CloseCount count = new CloseCount();

        CountedStreamCipher(StreamCipher real) {
            super(real);
        }

        @Override
        public void close() {
            count.closing();
            real.close();
        }
    }

    private final class CountedAeadCipher extends ForwardingAeadCipher {
        private final CloseCount count = new CloseCount();

        CountedAeadCipher(AeadCipher real) {
            super(real);
        }

        @Override
        public int open(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset)
                throws AEADBadTagException {
            runSingleOpenHook();
            return real.open(nonce, aad, in, inOffset, length, out, outOffset);
        }

        @Override
        public int open(byte[] nonce, byte[] aad, ByteBuffer in, ByteBuffer out) throws AEADBadTagException {
            runSingleOpenHook();
            return real.open(nonce, aad, in, out);
        }

        @Override
        public int openChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out,
                int outOffset) {
            runOpenHook(firstChunk, count);
            return runOpenedHook(firstChunk, count,
                    real.openChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset));
        }

        @Override
        public int openChunks(byte[] baseNonce, long firstChunk, ByteBuffer in, ByteBuffer out) {
            int count = in.remaining() / GcmInternals.SEALED_CHUNK_SIZE;
            runOpenHook(firstChunk, count);
            return runOpenedHook(firstChunk, count, real.openChunks(baseNonce, firstChunk, in, out));
        }

        @Override
        public void close() {
            count.closing();
            real.close();
        }
    }
}
