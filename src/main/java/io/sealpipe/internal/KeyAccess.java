package io.sealpipe.internal;

import io.sealpipe.AesKey;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import javax.crypto.SecretKey;

/**
 * How the format packages reach key bytes: an {@link AesKey}'s, lent for one call and wiped after
 * it, and a {@link SecretKey}'s raw AES bytes. {@code AesKey} registers what it lends when its
 * class initializes, so it is there before any key exists; no other class can register. Not an
 * API. Like reflection, this lets code on the class path read a key's bytes: sealpipe keeps keys
 * from logs, dumps of its objects and leftover copies, not from code running in the same JVM.
 */
public final class KeyAccess {
    // Set once without a lock: a lock on this class's object (static synchronized) is one any
    // code can take, and holding it would stall AesKey's class initialisation, and every key.
    private static final AtomicReference<Lender> LENDER = new AtomicReference<>();

    private KeyAccess() {}

    /** What the library does with the key bytes, through {@link #withBytes}. */
    @FunctionalInterface
    public interface Use<R, E extends Exception> {
        /** Uses {@code key}, which is wiped once this returns. */
        R apply(byte[] key) throws E;
    }

    /** What {@link AesKey} lends this class: its bytes for one call, and copies of itself. */
    public interface Lender {
        /** Calls {@code use} with a copy of {@code key}'s bytes, wiped afterwards. */
        <R, E extends Exception> R withBytes(AesKey key, Use<R, E> use) throws E;

        /** A new key with the same bytes, destroyed independently of {@code key}. */
        AesKey copy(AesKey key);
    }

    /**
     * Called once, by {@link AesKey}'s class initializer.
     *
     * @throws IllegalStateException if a lender is already registered
     */
    public static void register(Lender from) {
        if (StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).getCallerClass() != AesKey.class) {
            throw new IllegalStateException("only AesKey registers its lender");
        }
        if (!LENDER.compareAndSet(null, Objects.requireNonNull(from, "lender"))) {
            throw new IllegalStateException("AesKey's lender is already registered");
        }
    }

    /**
     * Calls {@code use} with a copy of {@code key}'s bytes, which is zeroed when it returns.
     *
     * @throws IllegalStateException if the key has been destroyed
     */
    public static <R, E extends Exception> R withBytes(AesKey key, Use<R, E> use) throws E {
        return lender(key).withBytes(key, use);
    }

    /**
     * A copy of {@code key} that the caller destroys, for an instance that outlives the caller's.
     *
     * @throws IllegalStateException if the key has been destroyed
     */
    public static AesKey copy(AesKey key) {
        return lender(key).copy(key);
    }

    /** A key exists only once AesKey has initialized, and so registered its lender. */
    private static Lender lender(AesKey key) {
        Objects.requireNonNull(key, "key");
        return LENDER.get();
    }

    /** "AES", or a transformation on AES ("AES/CTR/NoPadding", as Hadoop's key providers store). */
    public static boolean isAes(String algorithm) {
        String a = algorithm == null ? "" : algorithm.toUpperCase(Locale.ROOT);
        return a.equals("AES") || a.startsWith("AES/");
    }

    /**
     * The raw bytes of an AES {@link SecretKey}, checked, in a new array the caller wipes.
     *
     * @throws IllegalArgumentException if the key is not a raw AES key
     */
    public static byte[] rawAes(SecretKey key) {
        Objects.requireNonNull(key, "key");
        if (!isAes(key.getAlgorithm()) || !"RAW".equalsIgnoreCase(key.getFormat())) {
            throw new IllegalArgumentException("the key must be an AES key in RAW format, not " + key.getAlgorithm() + "/"
                    + key.getFormat());
        }
        byte[] bytes = key.getEncoded();
        if (bytes == null) {
            throw new IllegalArgumentException("the key gives no bytes (a key kept in a hardware token cannot be used)");
        }
        return bytes;
    }
}
