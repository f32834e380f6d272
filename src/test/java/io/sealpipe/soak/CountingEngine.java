package io.sealpipe.soak;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.ForwardingAeadCipher;
import io.sealpipe.engine.ForwardingEngine;
import io.sealpipe.engine.ForwardingStreamCipher;
import io.sealpipe.engine.StreamCipher;
import java.security.GeneralSecurityException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * A real engine that counts the AES-CTR and AES-GCM ciphers it made and the ones closed, so the
 * soak sees a cipher that a stream or channel never closed (its native context and key schedule
 * left to a Cleaner, or kept for ever). Every call goes straight to the real cipher.
 */
final class CountingEngine extends ForwardingEngine {
    /** What the thread is doing, for the report of a cipher never closed: set by the soak's threads. */
    private static final ThreadLocal<Supplier<String>> CONTEXT = ThreadLocal.withInitial(() -> () -> "");

    private final LongAdder made = new LongAdder();
    private final LongAdder closed = new LongAdder();
    /** Each cipher not closed yet, with where it was made. */
    private final Map<Object, Made> open = new ConcurrentHashMap<>();

    /** Where a cipher was made: the thread's operation and the stack. */
    static final class Made extends Throwable {
        Made(String context) {
            super(Thread.currentThread().getName() + ": " + context, null, false, true);
        }
    }

    /** Sets what this thread is doing, described when a cipher made now is never closed. */
    static void context(Supplier<String> context) {
        CONTEXT.set(context);
    }

    CountingEngine(CryptoEngine real) {
        super(real);
    }

    /** Ciphers made and not closed yet. */
    long open() {
        return made.sum() - closed.sum();
    }

    /** Where the ciphers not closed yet were made. */
    List<Made> openSites() {
        return List.copyOf(open.values());
    }

    /** Ciphers made so far. */
    long made() {
        return made.sum();
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        StreamCipher cipher = new CountedStreamCipher(real.newAesCtr(key, iv));
        made(cipher);
        return cipher;
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        AeadCipher cipher = new CountedAeadCipher(real.newAesGcm(key));
        made(cipher);
        return cipher;
    }

    private void made(Object cipher) {
        made.increment();
        open.put(cipher, new Made(CONTEXT.get().get()));
    }

    @Override
    public String toString() {
        return "counting " + real.name();
    }

    /** Counts the first close of one cipher (close is idempotent). */
    private final class CloseOnce {
        private final AtomicBoolean done = new AtomicBoolean();

        void closing(Object cipher) {
            if (done.compareAndSet(false, true)) {
                closed.increment();
                open.remove(cipher);
            }
        }
    }

    private final class CountedStreamCipher extends ForwardingStreamCipher {
        private final CloseOnce once = new CloseOnce();

        CountedStreamCipher(StreamCipher real) {
            super(real);
        }

        @Override
        public void close() {
            once.closing(this);
            real.close();
        }
    }

    private final class CountedAeadCipher extends ForwardingAeadCipher {
        private final CloseOnce once = new CloseOnce();

        CountedAeadCipher(AeadCipher real) {
            super(real);
        }

        @Override
        public void close() {
            once.closing(this);
            real.close();
        }
    }
}
