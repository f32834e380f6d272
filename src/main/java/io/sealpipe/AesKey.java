package io.sealpipe;

import java.util.Arrays;
import javax.security.auth.Destroyable;

/**
 * An AES key of 16, 24 or 32 bytes. The bytes are copied in, never printed, and zeroed by
 * {@link #destroy()}. Objects built from the key keep their own copies: {@link GcmStreams} and
 * {@link CtrStreams} until their own {@code destroy()}, the streams they make until they close
 * (a decrypting GCM stream only until it has checked the message header); what an engine keeps
 * is described by the engine (for JCE, see {@link io.sealpipe.engine.jce.JceEngine}).
 *
 * <pre>{@code
 * AesKey key = AesKey.copyOf(bytes);
 * Arrays.fill(bytes, (byte) 0);       // the caller's copy is the caller's to wipe
 * }</pre>
 */
public final class AesKey implements Destroyable {
    private final byte[] bytes;
    private volatile boolean destroyed;

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

    /** The key bytes themselves, for the library's own use; callers must not keep or modify them. */
    byte[] bytes() {
        if (destroyed) {
            throw new IllegalStateException("AES key has been destroyed");
        }
        return bytes;
    }

    /**
     * Zeroes the key bytes; objects already built from this key keep their own copies. Using
     * the key afterwards (in a builder's {@code build()}) throws {@code IllegalStateException}.
     */
    @Override
    public void destroy() {
        Arrays.fill(bytes, (byte) 0);
        destroyed = true;
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
