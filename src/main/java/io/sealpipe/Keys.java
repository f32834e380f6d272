package io.sealpipe;

import io.sealpipe.internal.KeyAccess;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.SecureRandom;
import java.security.UnrecoverableKeyException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * Where keys come from: new random AES keys, and AES keys kept as secret-key entries of a Java
 * {@link KeyStore} (PKCS12, the JDK's default, or JCEKS). The builders take the result directly
 * ({@link io.sealpipe.gcm.GcmStreams.Builder#key(SecretKey)}, {@link io.sealpipe.ctr.CtrStreams.Builder#key(SecretKey)}).
 *
 * <pre>{@code
 * KeyStore store = Keys.loadKeyStore(Path.of("keys.p12"), password);
 * SecretKey key = Keys.secretKey(store, "data", password);
 * GcmStreams gcm = GcmStreams.builder().key(key).build();
 * }</pre>
 *
 * Messages name files and aliases, never key bytes or passwords.
 */
public final class Keys {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Keys() {}

    /**
     * A new random AES key from {@link SecureRandom}.
     *
     * @param bits 128 or 256
     * @return the key ({@code getEncoded()} gives its bytes)
     * @throws IllegalArgumentException for another size
     */
    public static SecretKey generate(int bits) {
        if (bits != 128 && bits != 256) {
            throw new IllegalArgumentException("an AES key for sealpipe is 128 or 256 bits, not " + bits);
        }
        byte[] bytes = new byte[bits / 8];
        RANDOM.nextBytes(bytes);
        try {
            return new SecretKeySpec(bytes, "AES");
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /**
     * Loads a keystore file: PKCS12 (what {@code keytool} makes by default, {@code .p12}) or
     * JCEKS, recognised by content.
     *
     * @param file the keystore
     * @param password its password (the caller wipes it)
     * @return the loaded keystore
     * @throws IOException if the file cannot be read, or the password is wrong (a keystore's
     *     integrity check fails then), naming the file
     * @throws KeyStoreException if the file is neither a PKCS12 nor a JCEKS keystore
     */
    public static KeyStore loadKeyStore(Path file, char[] password) throws IOException, KeyStoreException {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(password, "password");
        byte[] content = Files.readAllBytes(file);
        // JCEKS files start with 0xcececece; PKCS12 is DER (0x30).
        boolean jceks = content.length >= 4 && (content[0] & 0xff) == 0xce && (content[1] & 0xff) == 0xce;
        KeyStore store = KeyStore.getInstance(jceks ? "JCEKS" : "PKCS12");
        try (InputStream in = new java.io.ByteArrayInputStream(content)) {
            store.load(in, password);
        } catch (IOException e) {
            Throwable cause = e.getCause();
            if (cause instanceof UnrecoverableKeyException || cause instanceof javax.crypto.BadPaddingException
                    || (e.getMessage() != null && e.getMessage().toLowerCase(Locale.ROOT).contains("password"))) {
                throw new IOException(file + ": the keystore password is wrong (the keystore's integrity check failed)", e);
            }
            throw new IOException(file + " is not a PKCS12 or JCEKS keystore, or is damaged: " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new KeyStoreException(file + ": cannot load the keystore: " + e.getMessage(), e);
        }
        return store;
    }

    /**
     * The AES key in a keystore's secret-key entry (algorithm {@code AES}, or a transformation on
     * it such as the {@code AES/CTR/NoPadding} of Hadoop's key providers).
     *
     * @param store a loaded keystore
     * @param alias the entry's alias
     * @param password the entry's password (for PKCS12 made by {@code keytool}, the keystore's)
     * @return the key
     * @throws GeneralSecurityException if there is no such entry, it is not an AES secret key of
     *     16 or 32 bytes, or the password does not open it; the message says which
     */
    public static SecretKey secretKey(KeyStore store, String alias, char[] password) throws GeneralSecurityException {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(alias, "alias");
        if (!store.containsAlias(alias)) {
            throw new KeyStoreException("the keystore has no entry '" + alias + "' (its entries: "
                    + String.join(", ", java.util.Collections.list(store.aliases())) + ")");
        }
        if (!store.entryInstanceOf(alias, KeyStore.SecretKeyEntry.class)) {
            throw new KeyStoreException("the keystore entry '" + alias + "' is not a secret key (a private key or a"
                    + " certificate?): store an AES key, e.g. with sealpipe keygen --keystore");
        }
        java.security.Key key;
        try {
            key = store.getKey(alias, password);
        } catch (UnrecoverableKeyException e) {
            throw new UnrecoverableKeyException("the password does not open the keystore entry '" + alias + "'");
        }
        if (!(key instanceof SecretKey secret) || !KeyAccess.isAes(key.getAlgorithm())) {
            throw new KeyStoreException("the keystore entry '" + alias + "' holds a " + key.getAlgorithm()
                    + " key, not an AES key");
        }
        byte[] encoded = secret.getEncoded();
        int length = encoded == null ? -1 : encoded.length;
        if (encoded != null) {
            Arrays.fill(encoded, (byte) 0);
        }
        if (length != 16 && length != 32) {
            throw new KeyStoreException("the keystore entry '" + alias + "' holds an AES key of " + length
                    + " bytes; sealpipe uses 16 or 32");
        }
        return secret;
    }
}
