package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sealpipe.Keys;
import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.Envelope;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sealpipe inspect}: lengths without a key; version, end and compression with one. */
class InspectCommandTest {
    private static final String PASSWORD = "inspect password";

    @TempDir
    Path dir;

    private static JsonNode json(Result r) throws Exception {
        return new ObjectMapper().readTree(r.out());
    }

    @Test
    void withoutAKeyOnlyTheLengthsAndWithTheMatchingVersionTheEndAndCompression() throws Exception {
        byte[] v0 = Keys.generate(256).getEncoded();
        byte[] v1 = Keys.generate(256).getEncoded();
        Path keystore = dir.resolve("keys.p12");
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        KeyStore.PasswordProtection protection = new KeyStore.PasswordProtection(PASSWORD.toCharArray());
        store.setEntry("data@0", new KeyStore.SecretKeyEntry(new javax.crypto.spec.SecretKeySpec(v0, "AES")), protection);
        store.setEntry("data@1", new KeyStore.SecretKeyEntry(new javax.crypto.spec.SecretKeySpec(v1, "AES")), protection);
        try (var out = Files.newOutputStream(keystore)) {
            store.store(out, PASSWORD.toCharArray());
        }
        Path password = Files.writeString(dir.resolve("password"), PASSWORD);
        Path oldKey = Files.writeString(dir.resolve("old.key"), HexFormat.of().formatHex(v0));
        byte[] plain = new byte[40_000];
        new Random(2).nextBytes(plain);
        Path in = Files.write(dir.resolve("plain"), plain);
        Path sealed = dir.resolve("sealed");
        assertEquals(0, CliRun.run("encrypt", "--key-file", oldKey.toString(), "--compress", "snappy", in.toString(),
                sealed.toString()).code());

        Result bare = CliRun.run("inspect", "--json", sealed.toString());
        assertEquals(0, bare.code(), bare.err());
        JsonNode b = json(bare);
        assertEquals("gcm-length", b.get("format").asText(), "without a key only the length is known");
        assertEquals(Files.size(sealed), b.get("stored_length").asLong());
        assertEquals(GcmStreams.plaintextLength(Files.size(sealed)), b.get("plaintext_length").asLong());
        assertEquals((Files.size(sealed) - 56) / 16400 + 1, b.get("chunks").asLong());
        assertFalse(b.has("ends_properly"), "no key: the end is not checked");

        Result keyed = CliRun.run("inspect", "--json", "--keystore", keystore.toString(), "--key-alias", "data",
                "--password-file", password.toString(), sealed.toString());
        assertEquals(0, keyed.code(), keyed.err());
        JsonNode k = json(keyed);
        assertEquals("data@0", k.get("key_version").asText());
        assertEquals("gcm", k.get("format").asText());
        assertTrue(k.get("key_matches").asBoolean());
        assertEquals("Cobblestone-256", k.get("variant").asText());
        assertTrue(k.get("ends_properly").asBoolean());
        assertEquals("snappy", k.get("compressed").asText());

        Result text = CliRun.run("inspect", "--key-file", oldKey.toString(), sealed.toString());
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().contains("ends properly:    true") && text.out().contains("key matches:      true")
                && !text.out().contains("key version"), text.out());

        // Cut inside the final chunk: a length a message can have, so only the key tells.
        byte[] bytes = Files.readAllBytes(sealed);
        Path cut = Files.write(dir.resolve("cut"), Arrays.copyOf(bytes, bytes.length - 5));
        assertEquals(0, CliRun.run("inspect", cut.toString()).code());
        Result cutKeyed = CliRun.run("inspect", "--json", "--key-file", oldKey.toString(), cut.toString());
        assertEquals(1, cutKeyed.code());
        assertFalse(json(cutKeyed).get("ends_properly").asBoolean());

        Path other = Files.writeString(dir.resolve("other.key"), HexFormat.of().formatHex(Keys.generate(256).getEncoded()));
        Result wrong = CliRun.run("inspect", "--key-file", other.toString(), sealed.toString());
        assertEquals(1, wrong.code());
        assertTrue(wrong.out().contains("no version of the key matches"), wrong.out());
        for (Result r : new Result[] {bare, keyed, text, cutKeyed, wrong}) {
            for (byte[] key : new byte[][] {v0, v1}) {
                assertFalse((r.out() + r.err()).contains(HexFormat.of().formatHex(key)), "a key in the output");
            }
            assertFalse((r.out() + r.err()).contains(PASSWORD), "the password in the output");
        }
    }

    @Test
    void aFileNoMessageCanBeIsUnrecognisedAndAMissingFileFails() throws Exception {
        Path odd = Files.write(dir.resolve("odd"), new byte[60]);
        Result r = CliRun.run("inspect", "--json", odd.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals("unrecognised", json(r).get("format").asText());
        assertTrue(json(r).get("note").asText().contains("CTR files"), r.out());
        Result missing = CliRun.run("inspect", dir.resolve("missing").toString());
        assertEquals(1, missing.code());
        assertTrue(missing.err().contains("no such file"), missing.err());
    }

    /**
     * A Hadoop {@code jceks://file/...} key provider with two versions of a key (made and rolled
     * through Hadoop's own API): files written under each decrypt, {@code inspect} names the
     * version, and a file under another key gives exit 1 naming the versions tried.
     */
    @Test
    void aHadoopKeyProviderWithTwoVersions() throws Exception {
        java.net.URI uri = java.net.URI.create("jceks://file" + dir.resolve("hadoop.jceks").toAbsolutePath());
        org.apache.hadoop.crypto.key.KeyProvider provider = org.apache.hadoop.crypto.key.KeyProviderFactory.get(uri,
                new org.apache.hadoop.conf.Configuration(false));
        org.apache.hadoop.crypto.key.KeyProvider.Options options =
                new org.apache.hadoop.crypto.key.KeyProvider.Options(new org.apache.hadoop.conf.Configuration(false));
        options.setBitLength(256);
        provider.createKey("data", options);
        provider.flush();
        Path in = Files.writeString(dir.resolve("plain"), "a table's rows\n".repeat(3000));
        String[] key = {"--key-provider", uri.toString(), "--key-name", "data"};
        assertEquals(0, CliRun.run(concat(new String[] {"encrypt"}, key, in.toString(), dir.resolve("v0").toString())).code());
        provider.rollNewVersion("data");
        provider.flush();
        provider.close();
        Result second = CliRun.run(concat(new String[] {"encrypt"}, key, in.toString(), dir.resolve("v1").toString()));
        assertEquals(0, second.code(), second.err());

        for (String file : new String[] {"v0", "v1"}) {
            Result back = CliRun.run(concat(new String[] {"decrypt"}, key, dir.resolve(file).toString(),
                    dir.resolve(file + ".back").toString()));
            assertEquals(0, back.code(), back.err());
            assertEquals(Files.readString(in), Files.readString(dir.resolve(file + ".back")));
            Result inspected = CliRun.run(concat(new String[] {"inspect", "--json"}, key, dir.resolve(file).toString()));
            assertEquals(0, inspected.code(), inspected.err());
            assertEquals("data@" + file.substring(1), json(inspected).get("key_version").asText());
        }

        // The CLI's own JVM, with the JDK's default jceks.key.serialFilter (the test JVM sets Hadoop's).
        java.util.List<String> child = io.sealpipe.ChildJvm.command("-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "decrypt", "--force");
        child.addAll(java.util.List.of(key));
        child.addAll(java.util.List.of(dir.resolve("v0").toString(), dir.resolve("v0.child").toString()));
        Process p = new ProcessBuilder(child).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), output);
        assertEquals(Files.readString(in), Files.readString(dir.resolve("v0.child")));

        Path other = Files.writeString(dir.resolve("other.key"), HexFormat.of().formatHex(Keys.generate(256).getEncoded()));
        assertEquals(0, CliRun.run("encrypt", "--key-file", other.toString(), in.toString(),
                dir.resolve("foreign").toString()).code());
        Result foreign = CliRun.run(concat(new String[] {"decrypt"}, key, dir.resolve("foreign").toString(),
                dir.resolve("foreign.back").toString()));
        assertEquals(1, foreign.code());
        assertTrue(foreign.err().contains("no version of the key matches") && foreign.err().contains("data@0, data@1"),
                foreign.err());
        Result inspectedForeign = CliRun.run(concat(new String[] {"inspect"}, key, dir.resolve("foreign").toString()));
        assertEquals(1, inspectedForeign.code());
        assertTrue(inspectedForeign.out().contains("no version of the key matches"), inspectedForeign.out());
    }

    private static String[] concat(String[] first, String[] key, String... rest) {
        java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of(first));
        all.addAll(java.util.List.of(key));
        all.addAll(java.util.List.of(rest));
        return all.toArray(String[]::new);
    }

    /** An envelope file of the sealed file system: what its envelope says, with no key and no KMS. */
    @Test
    void anEnvelopeFileShowsItsKeyAndVersionWithNoKey() throws Exception {
        Envelope envelope = Envelope.of(Envelope.KIND_HADOOP, false, "data", "data@3", new byte[16], new byte[32]);
        byte[] dataKey = Keys.generate(256).getEncoded();
        var bytes = new java.io.ByteArrayOutputStream();
        bytes.write(envelope.bytes());
        try (var out = GcmStreams.builder().key(dataKey).context(envelope.context()).build().encrypt(bytes)) {
            out.write(new byte[20_000]);
        }
        Path file = Files.write(dir.resolve("envelope"), bytes.toByteArray());
        Result r = CliRun.run("inspect", "--json", file.toString());
        assertEquals(0, r.code(), r.err());
        JsonNode j = json(r);
        assertEquals("sealed-envelope", j.get("format").asText());
        assertEquals("data", j.get("key_name").asText());
        assertEquals("data@3", j.get("key_version").asText());
        assertEquals("hadoop-key-provider", j.get("kms_kind").asText());
        assertEquals(20_000, j.get("plaintext_length").asLong());

        byte[] bad = bytes.toByteArray();
        bad[8] = 9; // an envelope version this sealpipe does not know
        Result unknown = CliRun.run("inspect", "--json", Files.write(dir.resolve("bad"), bad).toString());
        assertEquals(1, unknown.code(), unknown.out());
        assertTrue(json(unknown).get("note").asText().contains("format version 9"), unknown.out());
    }
}
