package io.sealpipe.commons;

import java.security.InvalidAlgorithmParameterException;
import java.security.InvalidKeyException;
import java.security.InvalidParameterException;
import java.security.Key;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Objects;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;

/**
 * The checks both ciphers of this package make in {@code init}, with the exceptions and messages
 * of Commons Crypto's JCE cipher: the mode, an AES key with a raw encoding, a 16-byte IV.
 */
final class InitArguments {
    static final int IV_LENGTH = 16;

    private InitArguments() {}

    /**
     * Checks the mode and the key's algorithm, and returns the IV of {@code params}.
     *
     * @param cipher the cipher's name in the message of a wrong mode
     */
    static byte[] check(int mode, Key key, AlgorithmParameterSpec params, String cipher)
            throws InvalidKeyException, InvalidAlgorithmParameterException {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(params, "params");
        if (mode != Cipher.ENCRYPT_MODE && mode != Cipher.DECRYPT_MODE) {
            throw new InvalidParameterException("Invalid operation mode " + mode + ": " + cipher
                    + " takes Cipher.ENCRYPT_MODE or Cipher.DECRYPT_MODE");
        }
        String algorithm = key.getAlgorithm();
        if (!"AES".equalsIgnoreCase(algorithm) && !"Rijndael".equalsIgnoreCase(algorithm)) {
            throw new InvalidKeyException("Wrong algorithm: AES or Rijndael required, not " + algorithm);
        }
        if (!(params instanceof IvParameterSpec spec)) {
            throw new InvalidAlgorithmParameterException("Wrong parameter type: IV expected, not "
                    + params.getClass().getName());
        }
        byte[] iv = spec.getIV();
        if (iv.length != IV_LENGTH) {
            throw new InvalidAlgorithmParameterException("Wrong IV length: must be 16 bytes long, not " + iv.length);
        }
        return iv;
    }

    /** The key's raw bytes, a copy the caller zeroes. */
    static byte[] rawKey(Key key) throws InvalidKeyException {
        byte[] raw = key.getEncoded();
        if (raw == null) {
            throw new InvalidKeyException("the key has no encoding: a raw AES key (SecretKeySpec) is needed");
        }
        return raw;
    }
}
