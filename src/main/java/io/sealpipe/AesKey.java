package io.sealpipe;

import io.sealpipe.internal.KeyAccess;
import java.util.Arrays;
import javax.security.auth.Destroyable;

/**
 * An AES key of 16, 24 or 32 bytes. The bytes are copied in, never printed, and zeroed by
 * {@link #destroy()}. Objects built from the key keep their own copies: {@link io.sealpipe.gcm.GcmStreams} and
 * {@link io.sealpipe.ctr.CtrStreams} until their own {@code destroy()}, the streams they make until they close
 * (a decrypting GCM stream only until it has checked the message header); what an engine keeps
 * is described by the engine (for JCE, see {@link io.sealpipe.engine.jce.JceEngine}).
 *
 * <p>Thread-safe: one thread may {@link #destroy()} the key while others build from it. Each
 * use takes the bytes whole or fails with {@code IllegalStateException}; none ever sees a
 * zeroed or half-zeroed key. The key locks a private object, never itself: code that holds
 * {@code synchronized (key)} blocks neither the key's uses nor its {@code destroy()}.
 *
 * <pre>{@code
 * AesKey key = AesKey.copyOf(bytes);
 * Arrays.fill(bytes, (byte) 0);       // the caller's copy is the caller's to wipe
 * }</pre>
 */
public final class AesKey implements Destroyable {
    // A lock of its own, not the key's monitor: the key is the caller's object, and a caller's
    // synchronized (key) would otherwise hold up every use of the key and its destroy().
    private final Object lock = new Object();
    private final byte[] bytes;          // read and zeroed only under lock
    private volatile boolean destroyed;  // set under lock, with the zeroing

    static {
        // The format packages reach the bytes through io.sealpipe.internal.KeyAccess: AesKey's API never hands them out.
        KeyAccess.register(new KeyAccess.Lender() {
            @Override
            public <R, E extends Exception> R withBytes(AesKey key, KeyAccess.Use<R, E> use) throws E {
                return key.withBytes(use);
            }

            @Override
            public AesKey copy(AesKey key) {
                return key.copy();
            }
        });
    }

    private AesKey(byte[] bytes) {
        this.bytes = bytes;
    }

    /**
     * Copies {@code key}.
     *
     * @param key the key bytes; the caller's array is neither kept nor changed
     * @return a holder of a private copy
     * @throws IllegalArgumentException if it is not 16, 24 or 32 bytes long
     * @throws NullPointerException if {@code key} is null
     */
    public static AesKey copyOf(byte[] key) {
        if (key == null) {
            throw new NullPointerException("key is null");
        }
        if (key.length != 16 && key.length != 24 && key.length != 32) {
            throw new IllegalArgumentException("AES key must be 16, 24 or 32 bytes, not " + key.length);
        }
        return new AesKey(key.clone());
    }

    /**
     * Key length in bytes, still known after {@link #destroy()}.
     *
     * @return 16, 24 or 32
     */
    public int length() {
        return bytes.length;
    }

    /**
     * Runs {@code use} on a private copy of the key, taken whole under the private lock that
     * {@link #destroy()} takes, and zeroed when {@code use} returns. So another thread's
     * {@code destroy()} never hands {@code use} a zeroed or half-zeroed key: it comes either
     * before the copy (and this throws) or after it (and {@code use} has the real key).
     * {@code use} must not keep the array.
     *
     * @throws IllegalStateException if the key was destroyed
     */
    private <R, E extends Exception> R withBytes(KeyAccess.Use<R, E> use) throws E {
        byte[] copy = copyBytes();
        try {
            return use.apply(copy);
        } finally {
            Arrays.fill(copy, (byte) 0);
        }
    }

    /**
     * Another holder of the same key, made from a copy taken whole (see {@link #withBytes}).
     *
     * @throws IllegalStateException if the key was destroyed
     */
    private AesKey copy() {
        return new AesKey(copyBytes());
    }

    private byte[] copyBytes() {
        synchronized (lock) {
            if (destroyed) {
                throw new IllegalStateException("AES key has been destroyed");
            }
            return bytes.clone();
        }
    }

    /**
     * Zeroes the key bytes; objects already built from this key keep their own copies. Using
     * the key afterwards (in a builder's {@code build()}) throws {@code IllegalStateException}.
     * Thread-safe: a copy being taken in another thread is finished first, and none is taken
     * after.
     */
    @Override
    public void destroy() {
        synchronized (lock) {
            destroyed = true;
            Arrays.fill(bytes, (byte) 0);
        }
    }

    @Override
    public boolean isDestroyed() {
        return destroyed;
    }

    @Override
    public String toString() {
        return "AesKey(" + bytes.length * 8 + " bits" + (destroyed ? ", destroyed" : "") + ")";
    }
}
