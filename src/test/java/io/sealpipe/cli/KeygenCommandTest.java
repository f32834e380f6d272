package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.Keys;
import io.sealpipe.cli.CliRun.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.util.HexFormat;
import java.util.Random;
import javax.crypto.SecretKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sealpipe keygen} and the keystore as a key source: a key made into a file (0600) and
 * into a PKCS12 entry decrypts what the other encrypted; nothing is overwritten; no key or
 * password appears on standard error.
 */
class KeygenCommandTest {
    private static final String PASSWORD = "correct horse battery staple";

    @TempDir
    Path dir;

    private static Result run(String... args) {
        return CliRun.run(args);
    }

    private Path passwordFile(String password) throws Exception {
        Path file = dir.resolve("password-" + password.hashCode());
        Files.writeString(file, password + "\n");
        return file;
    }

    @Test
    void keygenToAFileThenEncryptWithItAndDecryptWithTheSameKeyInAKeystoreEntry() throws Exception {
        Path keyFile = dir.resolve("key.hex");
        Result made = run("keygen", "--out", keyFile.toString());
        assertEquals(0, made.code(), made.err());
        assertEquals("", made.out(), "nothing on standard output");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keyFile)));
        String hex = Files.readString(keyFile).trim();
        assertEquals(64, hex.length(), "a 256-bit key as hex");
        assertFalse(made.err().contains(hex), "the key is not printed");

        // The same key as an entry of a PKCS12 keystore (as keytool -importpass or a KMS export would make).
        Path keystore = dir.resolve("keys.p12");
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        SecretKey key = new javax.crypto.spec.SecretKeySpec(HexFormat.of().parseHex(hex), "AES");
        store.setEntry("data", new KeyStore.SecretKeyEntry(key), new KeyStore.PasswordProtection(PASSWORD.toCharArray()));
        try (var out = Files.newOutputStream(keystore)) {
            store.store(out, PASSWORD.toCharArray());
        }

        byte[] plain = new byte[200_000];
        new Random(1).nextBytes(plain);
        Path in = dir.resolve("plain");
        Files.write(in, plain);
        Result encrypted = run("encrypt", "--key-file", keyFile.toString(), in.toString(), dir.resolve("sealed").toString());
        assertEquals(0, encrypted.code(), encrypted.err());
        Result decrypted = run("decrypt", "--keystore", keystore.toString(), "--key-alias", "data", "--password-file",
                passwordFile(PASSWORD).toString(), dir.resolve("sealed").toString(), dir.resolve("back").toString());
        assertEquals(0, decrypted.code(), decrypted.err());
        assertArrayEquals(plain, Files.readAllBytes(dir.resolve("back")));
    }

    @Test
    void keygenIntoAKeystoreEntryThenRoundTrip() throws Exception {
        Path keystore = dir.resolve("keys.p12");
        Path password = passwordFile(PASSWORD);
        Result first = run("keygen", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString());
        assertEquals(0, first.code(), first.err());
        Result second = run("keygen", "--aes", "128", "--keystore", keystore.toString(), "--key-alias", "b",
                "--password-file", password.toString());
        assertEquals(0, second.code(), second.err());
        KeyStore store = Keys.loadKeyStore(keystore, PASSWORD.toCharArray());
        assertEquals(32, Keys.secretKey(store, "a", PASSWORD.toCharArray()).getEncoded().length);
        assertEquals(16, Keys.secretKey(store, "b", PASSWORD.toCharArray()).getEncoded().length);

        Path in = dir.resolve("plain");
        Files.writeString(in, "rows of a table\n".repeat(5000));
        assertEquals(0, run("encrypt", "--aes", "128", "--keystore", keystore.toString(), "--key-alias", "b",
                "--password-file", password.toString(), in.toString(), dir.resolve("sealed").toString()).code());
        Result back = run("decrypt", "--aes", "128", "--keystore", keystore.toString(), "--key-alias", "b",
                "--password-file", password.toString(), dir.resolve("sealed").toString(), dir.resolve("back").toString());
        assertEquals(0, back.code(), back.err());
        assertArrayEquals(Files.readAllBytes(in), Files.readAllBytes(dir.resolve("back")));
    }

    @Test
    void nothingIsOverwrittenAndFailuresNameNoSecret() throws Exception {
        Path keyFile = dir.resolve("key.hex");
        assertEquals(0, run("keygen", "--out", keyFile.toString()).code());
        String before = Files.readString(keyFile);
        Result again = run("keygen", "--out", keyFile.toString());
        assertEquals(2, again.code());
        assertTrue(again.err().contains("never overwrites"), again.err());
        assertEquals(before, Files.readString(keyFile), "the key file is unchanged");

        Path keystore = dir.resolve("keys.p12");
        Path password = passwordFile(PASSWORD);
        assertEquals(0, run("keygen", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString()).code());
        byte[] stored = Files.readAllBytes(keystore);
        Result same = run("keygen", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString());
        assertEquals(2, same.code());
        assertTrue(same.err().contains("already has an entry 'a'"), same.err());
        assertArrayEquals(stored, Files.readAllBytes(keystore), "the keystore is unchanged");

        String wrong = "not the password";
        Path in = dir.resolve("plain");
        Files.writeString(in, "x");
        Result refused = run("encrypt", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                passwordFile(wrong).toString(), in.toString(), dir.resolve("out").toString());
        assertEquals(1, refused.code(), refused.err());
        assertTrue(refused.err().contains("password is wrong"), refused.err());
        Result missing = run("encrypt", "--keystore", keystore.toString(), "--key-alias", "nope", "--password-file",
                password.toString(), in.toString(), dir.resolve("out").toString());
        assertEquals(1, missing.code(), missing.err());
        assertTrue(missing.err().contains("has no entry 'nope'"), missing.err());
        String entryHex = HexFormat.of().formatHex(
                Keys.secretKey(Keys.loadKeyStore(keystore, PASSWORD.toCharArray()), "a", PASSWORD.toCharArray()).getEncoded());
        for (Result r : new Result[] {again, same, refused, missing}) {
            String all = r.out() + r.err();
            assertFalse(all.contains(before.trim()) || all.contains(entryHex), "a key's hex in: " + all);
            assertFalse(all.contains(PASSWORD) || all.contains(wrong), "a password in: " + all);
        }
        assertFalse(Files.exists(dir.resolve("out")), "no output after a key failure");
    }

    @Test
    void stdoutOnlyWhenAskedAndBadArgumentsAreUsageErrors() throws Exception {
        Result printed = run("keygen", "--stdout", "--aes", "128");
        assertEquals(0, printed.code(), printed.err());
        assertEquals(32, printed.out().trim().length());
        assertEquals(2, run("keygen").code(), "a destination is required");
        assertEquals(2, run("keygen", "--aes", "192", "--stdout").code());
        Result noPassword = run("keygen", "--keystore", dir.resolve("k.p12").toString(), "--key-alias", "a");
        if (System.getenv(KeystorePassword.ENV) == null) {
            assertEquals(2, noPassword.code(), noPassword.err());
            assertTrue(noPassword.err().contains("--password-file FILE or set SEALPIPE_KEYSTORE_PASSWORD"), noPassword.err());
        }
        Result badEnv = run("encrypt", "--key-env", "SEALPIPE_TEST_NO_SUCH_VARIABLE", "-", "-");
        assertEquals(2, badEnv.code());
        assertTrue(badEnv.err().contains("is not set"), badEnv.err());
    }

    @Test
    void anExistingOutIsReplacedOnlyWithForceAndKeepsItsPermissions() throws Exception {
        Path key = dir.resolve("key.hex");
        assertEquals(0, run("keygen", "--out", key.toString()).code());
        Path in = dir.resolve("plain");
        Files.writeString(in, "new contents");
        Path out = dir.resolve("out");
        Files.writeString(out, "old contents");
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rw-r-----"));

        Result refused = run("encrypt", "--key-file", key.toString(), in.toString(), out.toString());
        assertEquals(2, refused.code());
        assertTrue(refused.err().contains("OUT exists: add --force"), refused.err());
        assertEquals(1, refused.err().strip().lines().count(), "one line: " + refused.err());
        assertEquals("old contents", Files.readString(out));

        Result forced = run("encrypt", "--force", "--key-file", key.toString(), in.toString(), out.toString());
        assertEquals(0, forced.code(), forced.err());
        assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
        Path back = dir.resolve("back");
        assertEquals(0, run("decrypt", "--key-file", key.toString(), out.toString(), back.toString()).code());
        assertEquals("new contents", Files.readString(back));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(back)), "a new OUT: owner only");
    }

    /**
     * A keystore laid out as Hadoop's JCEKS key provider keeps a rolled key (metadata under
     * "data", versions as "data@0", "data@1", AES/CTR/NoPadding entries): encrypt uses the newest,
     * decrypt finds the version whose commitment matches, and a file under another key fails with
     * exit 1 naming the versions tried.
     */
    @Test
    void keyVersionsInAKeystoreDecryptFilesWrittenUnderEach() throws Exception {
        byte[] v0 = Keys.generate(256).getEncoded();
        byte[] v1 = Keys.generate(256).getEncoded();
        Path keystore = dir.resolve("keys.jceks");
        KeyStore store = KeyStore.getInstance("JCEKS");
        store.load(null, null);
        KeyStore.PasswordProtection protection = new KeyStore.PasswordProtection(PASSWORD.toCharArray());
        store.setEntry("data", new KeyStore.SecretKeyEntry(new javax.crypto.spec.SecretKeySpec(new byte[40], "KeyMetadata")),
                protection);
        store.setEntry("data@0", new KeyStore.SecretKeyEntry(new javax.crypto.spec.SecretKeySpec(v0, "AES/CTR/NoPadding")),
                protection);
        store.setEntry("data@1", new KeyStore.SecretKeyEntry(new javax.crypto.spec.SecretKeySpec(v1, "AES/CTR/NoPadding")),
                protection);
        try (var out = Files.newOutputStream(keystore)) {
            store.store(out, PASSWORD.toCharArray());
        }
        Path password = passwordFile(PASSWORD);
        Path in = dir.resolve("plain");
        Files.writeString(in, "written before and after a key roll\n".repeat(2000));
        Path old = dir.resolve("old.key");
        Files.writeString(old, HexFormat.of().formatHex(v0));
        assertEquals(0, run("encrypt", "--key-file", old.toString(), in.toString(), dir.resolve("under-v0").toString()).code());
        assertEquals(0, run("encrypt", "--keystore", keystore.toString(), "--key-alias", "data", "--password-file",
                password.toString(), in.toString(), dir.resolve("under-newest").toString()).code());
        Path newest = dir.resolve("newest.key");
        Files.writeString(newest, HexFormat.of().formatHex(v1));
        Result withV1 = run("decrypt", "--key-file", newest.toString(), dir.resolve("under-newest").toString(),
                dir.resolve("check").toString());
        assertEquals(0, withV1.code(), "encrypt used the newest version: " + withV1.err());

        for (String file : new String[] {"under-v0", "under-newest"}) {
            Path back = dir.resolve("back-" + file);
            Result r = run("decrypt", "--keystore", keystore.toString(), "--key-alias", "data", "--password-file",
                    password.toString(), dir.resolve(file).toString(), back.toString());
            assertEquals(0, r.code(), file + ": " + r.err());
            assertArrayEquals(Files.readAllBytes(in), Files.readAllBytes(back), file);
        }

        Path other = dir.resolve("other.key");
        assertEquals(0, run("keygen", "--out", other.toString()).code());
        assertEquals(0, run("encrypt", "--key-file", other.toString(), in.toString(), dir.resolve("foreign").toString())
                .code());
        Result foreign = run("decrypt", "--keystore", keystore.toString(), "--key-alias", "data", "--password-file",
                password.toString(), dir.resolve("foreign").toString(), dir.resolve("nope").toString());
        assertEquals(1, foreign.code(), foreign.err());
        assertTrue(foreign.err().contains("no version of the key matches") && foreign.err().contains("data@0, data@1"),
                foreign.err());
        assertFalse(Files.exists(dir.resolve("nope")));
        for (byte[] k : new byte[][] {v0, v1}) {
            assertFalse(foreign.err().contains(HexFormat.of().formatHex(k)), "a key in: " + foreign.err());
        }
    }

    /**
     * A key typed where a name or a path belongs (--key-env, --keystore, --key-alias's keystore)
     * is never shown back; aliases compare without case.
     */
    @Test
    void aKeyTypedInTheWrongPlaceIsNotShownAndAliasesIgnoreCase() throws Exception {
        String hex = HexFormat.of().formatHex(Keys.generate(256).getEncoded());
        Path in = dir.resolve("plain");
        Files.writeString(in, "x");
        Result env = run("encrypt", "--key-env", hex, in.toString(), dir.resolve("o1").toString());
        assertEquals(2, env.code());
        assertFalse(env.err().contains(hex), env.err());
        assertTrue(env.err().contains("not a variable name"), env.err());
        Result store = run("encrypt", "--keystore", hex, "--key-alias", "data", "--password-file",
                passwordFile(PASSWORD).toString(), in.toString(), dir.resolve("o2").toString());
        assertEquals(1, store.code());
        assertFalse(store.err().contains(hex), store.err());
        assertTrue(store.err().contains("the --keystore file does not exist"), store.err());

        Path keystore = dir.resolve("keys.p12");
        Path password = passwordFile(PASSWORD);
        assertEquals(0, run("keygen", "--keystore", keystore.toString(), "--key-alias", "Data@0", "--password-file",
                password.toString()).code());
        assertEquals(0, run("keygen", "--keystore", keystore.toString(), "--key-alias", "DATA@1", "--password-file",
                password.toString()).code());
        Path sealed = dir.resolve("sealed");
        assertEquals(0, run("encrypt", "--keystore", keystore.toString(), "--key-alias", "data", "--password-file",
                password.toString(), in.toString(), sealed.toString()).code());
        Result inspected = run("inspect", "--keystore", keystore.toString(), "--key-alias", "Data", "--password-file",
                password.toString(), sealed.toString());
        assertEquals(0, inspected.code(), inspected.err());
        assertTrue(inspected.out().contains("data@1"), "the newest version wrote it: " + inspected.out());
        Result empty = run("keygen", "--keystore", dir.resolve("k2.p12").toString(), "--key-alias", "a",
                "--password-file", Files.writeString(dir.resolve("empty"), "\n").toString());
        assertEquals(2, empty.code());
        assertTrue(empty.err().contains("password is empty"), empty.err());
    }
}
