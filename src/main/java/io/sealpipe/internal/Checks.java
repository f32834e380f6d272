package io.sealpipe.internal;

import io.sealpipe.Parallelism;

/** Argument checks whose messages name the bad value, shared by every engine. */
public final class Checks {
    private Checks() {}

    /** Returns {@code parallelism} if it is 1..{@link Parallelism#MAX}. */
    public static int parallelism(int parallelism) {
        if (parallelism < 1 || parallelism > Parallelism.MAX) {
            throw new IllegalArgumentException("parallelism must be 1.." + Parallelism.MAX + ", not " + parallelism);
        }
        return parallelism;
    }

    /** Checks that {@code array[offset, offset + length)} exists. */
    public static void range(String name, byte[] array, int offset, int length) {
        if (array == null) {
            throw new NullPointerException(name + " is null");
        }
        if (offset < 0 || length < 0 || offset > array.length - length) {
            throw new IndexOutOfBoundsException(name + ": offset " + offset + " and length "
                    + length + " out of bounds for an array of " + array.length + " bytes");
        }
    }

    /** Checks that a fixed-size parameter (IV, nonce) has exactly {@code expected} bytes. */
    public static void length(String name, byte[] value, int expected) {
        if (value == null) {
            throw new NullPointerException(name + " is null");
        }
        if (value.length != expected) {
            throw new IllegalArgumentException(
                    name + " must be " + expected + " bytes, not " + value.length);
        }
    }

    /** Checks an AES key length and returns it. */
    public static int aesKey(byte[] key) throws java.security.InvalidKeyException {
        if (key == null) {
            throw new NullPointerException("key is null");
        }
        if (key.length != 16 && key.length != 24 && key.length != 32) {
            throw new java.security.InvalidKeyException(
                    "AES key must be 16, 24 or 32 bytes, not " + key.length);
        }
        return key.length;
    }

    /** Checks an HMAC key: any length but empty. */
    public static void hmacKey(byte[] key) throws java.security.InvalidKeyException {
        if (key == null) {
            throw new NullPointerException("key is null");
        }
        if (key.length == 0) {
            throw new java.security.InvalidKeyException("HMAC key must not be empty");
        }
    }

    /** Rejects in/out ranges of one array that overlap without being the same (in place). */
    public static void noPartialOverlap(byte[] in, int inOffset, byte[] out, int outOffset, int length) {
        if (in == out && inOffset != outOffset && length > 0
                && inOffset < outOffset + length && outOffset < inOffset + length) {
            throw new IllegalArgumentException("input [" + inOffset + ", " + (inOffset + length)
                    + ") and output [" + outOffset + ", " + (outOffset + length)
                    + ") overlap in one array: use the same offset (in place) or disjoint ranges");
        }
    }
}
