package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Arrays;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link Keys}: random keys, keystore entries in PKCS12 and JCEKS, and builders given a SecretKey. */
class KeysTest {
    private static final char[] PASSWORD = "keystore password".toCharArray();

    @TempDir
    Path dir;

    @Test
    void generatedKeysHaveTheirSizeAndDiffer() {
        SecretKey a = Keys.generate(256);
        SecretKey b = Keys.generate(256);
        assertEquals("AES", a.getAlgorithm());
        assertEquals(32, a.getEncoded().length);
        assertEquals(16, Keys.generate(128).getEncoded().length);
        assertFalse(Arrays.equals(a.getEncoded(), b.getEncoded()));
        assertThrows(IllegalArgumentException.class, () -> Keys.generate(192));
    }

    @ParameterizedTest
    @ValueSource(strings = {"PKCS12", "JCEKS"})
    void aKeystoreEntryEncryptsWhatItsBytesDecrypt(String type) throws Exception {
        SecretKey key = Keys.generate(256);
        Path file = dir.resolve("keys." + type.toLowerCase());
        KeyStore store = KeyStore.getInstance(type);
        store.load(null, null);
        store.setEntry("data", new KeyStore.SecretKeyEntry(key), new KeyStore.PasswordProtection(PASSWORD));
        try (OutputStream out = Files.newOutputStream(file)) {
            store.store(out, PASSWORD);
        }

        SecretKey loaded = Keys.secretKey(Keys.loadKeyStore(file, PASSWORD), "data", PASSWORD);
        assertArrayEquals(key.getEncoded(), loaded.getEncoded());

        byte[] plain = "a secret kept in a keystore".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteArrayOutputStream sealed = new ByteArrayOutputStream();
        try (OutputStream out = GcmStreams.builder().key(loaded).build().encrypt(sealed)) {
            out.write(plain);
        }
        try (InputStream in = GcmStreams.builder().key(key.getEncoded()).build()
                .decrypt(new ByteArrayInputStream(sealed.toByteArray()))) {
            assertArrayEquals(plain, in.readAllBytes());
        }
        CtrStreams ctr = CtrStreams.builder().key(loaded).iv(new byte[16]).build();
        ctr.destroy();
    }

    @Test
    void keystoreMistakesSayWhatIsWrongAndNameNoSecret() throws Exception {
        Path file = dir.resolve("keys.p12");
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setEntry("data", new KeyStore.SecretKeyEntry(Keys.generate(256)), new KeyStore.PasswordProtection(PASSWORD));
        store.setEntry("hmac", new KeyStore.SecretKeyEntry(new SecretKeySpec(new byte[32], "HmacSHA256")),
                new KeyStore.PasswordProtection(PASSWORD));
        try (OutputStream out = Files.newOutputStream(file)) {
            store.store(out, PASSWORD);
        }
        IOException wrong = assertThrows(IOException.class, () -> Keys.loadKeyStore(file, "guess".toCharArray()));
        assertTrue(wrong.getMessage().contains("password is wrong"), wrong.getMessage());
        assertFalse(wrong.getMessage().contains("guess"));

        KeyStore loaded = Keys.loadKeyStore(file, PASSWORD);
        GeneralSecurityException none = assertThrows(GeneralSecurityException.class,
                () -> Keys.secretKey(loaded, "nope", PASSWORD));
        assertTrue(none.getMessage().contains("no entry 'nope'") && none.getMessage().contains("data"), none.getMessage());
        GeneralSecurityException hmac = assertThrows(GeneralSecurityException.class,
                () -> Keys.secretKey(loaded, "hmac", PASSWORD));
        assertTrue(hmac.getMessage().contains("not an AES key"), hmac.getMessage());

        Files.writeString(dir.resolve("not-a-keystore"), "hello");
        IOException garbage = assertThrows(IOException.class, () -> Keys.loadKeyStore(dir.resolve("not-a-keystore"), PASSWORD));
        assertTrue(garbage.getMessage().contains("not a PKCS12 or JCEKS keystore"), garbage.getMessage());

        assertThrows(IllegalArgumentException.class,
                () -> GcmStreams.builder().key(new SecretKeySpec(new byte[32], "HmacSHA256")));
        assertThrows(IllegalArgumentException.class, () -> GcmStreams.builder().key(new SecretKeySpec(new byte[24], "AES")));
    }
}
