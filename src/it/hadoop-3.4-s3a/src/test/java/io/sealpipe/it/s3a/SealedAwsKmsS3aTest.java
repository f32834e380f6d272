package io.sealpipe.it.s3a;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.AwsEnvelopeKms;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.Envelope;
import io.sealpipe.it.s3.AwsKmsServer;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.util.functional.FutureIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code ss3a} in envelope mode under AWS KMS keys ({@link AwsEnvelopeKms}), against S3Proxy and
 * local-kms (a real AWS KMS API server, {@link AwsKmsServer}): the key named by its alias, the
 * region and credentials taken from S3A's settings. Files are written, listed and read every way
 * S3A reads; every object is a valid envelope file of kind 2 naming the key's ARN; KMS calls are
 * counted by the server; each KMS failure is an IOException naming the path, the key and the
 * endpoint, with no byte of data and no object left by a failed create.
 */
class SealedAwsKmsS3aTest {
    private static final int MIB = 1 << 20;
    private static S3Server s3;
    private static AwsKmsServer kms;
    private static S3AFileSystem s3a;

    @BeforeAll
    static void start() throws Exception {
        s3 = S3Server.start();
        kms = AwsKmsServer.start(java.nio.file.Path.of("target", "local-kms").toAbsolutePath());
        Configuration plain = new Configuration();
        s3.configure(plain);
        plain.setBoolean("fs.s3a.impl.disable.cache", true);
        s3a = (S3AFileSystem) FileSystem.get(URI.create("s3a://" + S3Server.BUCKET + "/"), plain);
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (s3a != null) {
                s3a.close();
            }
        } finally {
            try {
                if (kms != null) {
                    kms.close();
                }
            } finally {
                if (s3 != null) {
                    s3.close();
                }
            }
        }
    }

    /**
     * The settings docs/sealed-files.md "Keys in AWS KMS" gives, with the key {@code alias} and
     * the KMS at {@code endpoint}: no region of its own (S3A's is taken), S3A's credentials.
     */
    private static Configuration conf(String alias, String endpoint) {
        Configuration conf = new Configuration();
        s3.configure(conf);
        conf.set("fs.ss3a.impl", SealedFileSystem.class.getName());
        conf.set(SealedFileSystem.wrapsKey("ss3a"), "s3a");
        conf.set("sealpipe.fs.key.mode", "envelope");
        conf.set(SealedFileSystem.KMS_CLASS, AwsEnvelopeKms.class.getName());
        conf.set(SealedFileSystem.KEY_NAME, alias);
        conf.set(AwsEnvelopeKms.ENDPOINT, endpoint);
        conf.set("fs.s3a.multipart.size", "5M"); // S3's least
        conf.set("fs.s3a.multipart.threshold", "5M");
        conf.setBoolean("fs.ss3a.impl.disable.cache", true);
        conf.setBoolean("fs.s3a.impl.disable.cache", true);
        return conf;
    }

    private static FileSystem sealed(Configuration conf) throws IOException {
        return FileSystem.get(URI.create("ss3a://" + S3Server.BUCKET + "/"), conf);
    }

    private static Path sealedPath(String p) {
        return new Path("ss3a://" + S3Server.BUCKET + "/" + p);
    }

    private static Path plainPath(String p) {
        return new Path("s3a://" + S3Server.BUCKET + "/" + p);
    }

    private static byte[] data(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void write(FileSystem fs, Path path, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(path, true)) {
            out.write(data);
        }
    }

    private static byte[] read(FileSystem fs, Path path) throws IOException {
        try (InputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    /** The stored object's envelope, read through plain S3A, checked against its length. */
    private static Envelope envelope(String p, long plaintext) throws IOException {
        byte[] head = new byte[Envelope.LENGTH];
        try (FSDataInputStream in = s3a.open(plainPath(p))) {
            in.readFully(0, head);
        }
        assertEquals(Envelope.LENGTH + GcmStreams.ciphertextLength(plaintext), s3a.getFileStatus(plainPath(p)).getLen(),
                p + ": 512 bytes of envelope and the chunked message");
        return Envelope.parse(head);
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t).append(" | ");
        }
        return all.toString();
    }

    @Test
    void writesListsAndReadsEveryWayUnderAnAliasInOneGenerateDataKey() throws Exception {
        int generated = kms.requests("GenerateDataKey");
        int decrypts = kms.requests("Decrypt");
        byte[] small = data(100_000, 1);
        byte[] large = data(12 * MIB + 3, 2); // three multipart parts of 5 MiB
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()))) {
            write(fs, sealedPath("aws/small.bin"), small);
            try (FSDataOutputStream out = fs.create(sealedPath("aws/large.bin"), true)) {
                for (int at = 0; at < large.length; at += MIB) {
                    out.write(large, at, Math.min(MIB, large.length - at));
                }
            }
            try (FSDataOutputStream out = fs.create(sealedPath("aws/aborted.bin"), true)) {
                out.write(large, 0, 6 * MIB);
                out.abort();
            }
            assertFalse(s3a.exists(plainPath("aws/aborted.bin")), "an aborted write leaves no object");
            assertEquals(List.of(), s3.pendingUploads("aws/"), "and no pending multipart upload");

            FileStatus[] listed = fs.listStatus(sealedPath("aws"));
            assertEquals(2, listed.length, Arrays.toString(listed));
            for (FileStatus status : listed) {
                long expected = status.getPath().getName().equals("small.bin") ? small.length : large.length;
                assertEquals(expected, status.getLen(), status.getPath() + ": listed with its plaintext length");
            }
            assertArrayEquals(small, read(fs, sealedPath("aws/small.bin")));
            assertArrayEquals(large, read(fs, sealedPath("aws/large.bin")));
            try (FSDataInputStream in = fs.open(sealedPath("aws/large.bin"))) {
                byte[] part = new byte[100_000];
                in.readFully(7 * MIB - 17, part);
                assertArrayEquals(Arrays.copyOfRange(large, 7 * MIB - 17, 7 * MIB - 17 + part.length), part, "positioned");
                List<FileRange> ranges = List.of(FileRange.createFileRange(5, 1000),
                        FileRange.createFileRange(6 * MIB, 70_000), FileRange.createFileRange(large.length - 10, 10));
                in.readVectored(ranges, ByteBuffer::allocate);
                for (FileRange range : ranges) {
                    ByteBuffer got = FutureIO.awaitFuture(range.getData());
                    byte[] bytes = new byte[got.remaining()];
                    got.get(bytes);
                    assertArrayEquals(Arrays.copyOfRange(large, (int) range.getOffset(),
                            (int) range.getOffset() + range.getLength()), bytes, "vectored " + range);
                }
            }
        }
        for (String p : List.of("aws/small.bin", "aws/large.bin")) {
            Envelope envelope = envelope(p, p.endsWith("small.bin") ? small.length : large.length);
            assertEquals(Envelope.KIND_AWS, envelope.kind(), p);
            assertEquals(AwsKmsServer.ALIAS, envelope.keyName(), p + ": the key as configured");
            assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_MAIN), envelope.versionName(), p + ": the key's ARN");
            assertEquals(0, envelope.iv().length, p);
        }
        assertEquals(1, kms.requests("GenerateDataKey") - generated, "one data key for the three files");
        assertEquals(0, kms.requests("Decrypt") - decrypts, "the writer reads its own files with the key it kept");
    }

    /** The key named by its id or its ARN, as AWS names keys, besides an alias. */
    @Test
    void theKeyNamedByItsIdOrItsArn() throws Exception {
        for (String name : List.of(AwsKmsServer.KEY_MAIN, AwsKmsServer.arn(AwsKmsServer.KEY_MAIN))) {
            byte[] data = data(3000, name.length());
            String p = "named/" + name.length();
            try (FileSystem fs = sealed(conf(name, kms.endpoint()))) {
                write(fs, sealedPath(p), data);
            }
            try (FileSystem fs = sealed(conf(name, kms.endpoint()))) {
                assertArrayEquals(data, read(fs, sealedPath(p)), name);
            }
            Envelope envelope = envelope(p, data.length);
            assertEquals(name, envelope.keyName(), "the key as configured");
            assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_MAIN), envelope.versionName(), "the key's ARN");
        }
    }

    /**
     * A thousand files written by one file system and read by another, with the defaults: the
     * server sees at most 10 KMS calls (one GenerateDataKey, one Decrypt per data key read),
     * where S3A's client-side encryption makes one per object written and one per GET.
     */
    @Test
    void aThousandFilesTakeAtMostTenKmsCalls() throws Exception {
        Map<String, Integer> servedBefore = kms.served();
        int before = kms.requests();
        int files = 1000;
        try (FileSystem writer = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()))) {
            for (int i = 0; i < files; i++) {
                write(writer, sealedPath("thousand/part-" + i), data(100, i));
            }
        }
        try (FileSystem reader = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()))) {
            for (int i = 0; i < files; i++) {
                assertArrayEquals(data(100, i), read(reader, sealedPath("thousand/part-" + i)));
            }
        }
        int calls = kms.requests() - before;
        Map<String, Integer> served = kms.served();
        int servedCalls = 0;
        for (String operation : served.keySet()) {
            servedCalls += served.get(operation) - servedBefore.get(operation);
        }
        System.out.println("1,000 files written and read: " + calls + " KMS requests (GenerateDataKey "
                + (served.get("GenerateDataKey") - servedBefore.get("GenerateDataKey")) + ", Decrypt "
                + (served.get("Decrypt") - servedBefore.get("Decrypt")) + ")");
        assertTrue(calls >= 2, "a positive control: the writer generated and the reader unwrapped (" + calls + ")");
        assertEquals(calls, servedCalls, "the server carried out every call the proxy counted");
        assertTrue(calls <= 10, calls + " KMS calls for 1,000 files (target: at most 10)");
    }

    /** One operation, measured on the sealed file system (S3 requests of its S3A, KMS calls) and on plain S3A. */
    private interface Operation {
        void run(FileSystem fs, String root) throws IOException;
    }

    /**
     * S3 requests and KMS calls per operation, sealed under the AWS key against plain S3A on the
     * same S3Proxy: metadata requests and PUTs the same, at most one GET more (an open reads the
     * envelope and the header first), and KMS calls only for a data key made or unwrapped.
     * Written to target/aws-kms-requests.txt.
     */
    @Test
    void requestsPerOperationAgainstPlainS3a() throws Exception {
        byte[] data = data(100_000, 61);
        List<String> report = new ArrayList<>();
        try (FileSystem writer = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()));
                FileSystem reader = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()))) {
            Operation create = (fs, root) -> write(fs, new Path(root + "/a"), data);
            Operation createAnother = (fs, root) -> write(fs, new Path(root + "/b"), data);
            Operation readWhole = (fs, root) -> assertArrayEquals(data, read(fs, new Path(root + "/a")));
            Operation positioned = (fs, root) -> {
                try (FSDataInputStream in = fs.open(new Path(root + "/b"))) {
                    byte[] b = new byte[100];
                    in.readFully(50_000, b);
                    assertArrayEquals(Arrays.copyOfRange(data, 50_000, 50_100), b);
                }
            };
            Operation status = (fs, root) -> assertEquals(data.length, fs.getFileStatus(new Path(root + "/a")).getLen());
            Operation list = (fs, root) -> assertEquals(2, fs.listStatus(new Path(root)).length);
            measure(report, "create, write 100,000 bytes, close: the writer's first file", writer, create, 1, 0);
            measure(report, "create, write 100,000 bytes, close: its second file", writer, createAnother, 0, 0);
            measure(report, "open, read whole: a file the same file system wrote", writer, readWhole, 0, 0);
            measure(report, "open, read whole: another file system, its first file", reader, readWhole, 0, 1);
            measure(report, "open, read 100 bytes at 50,000: its second file (the same data key)", reader, positioned, 0, 0);
            measure(report, "getFileStatus", reader, status, 0, 0);
            measure(report, "listStatus of the 2 files", reader, list, 0, 0);
        }
        java.nio.file.Files.write(java.nio.file.Path.of("target", "aws-kms-requests.txt"), report);
        report.forEach(System.out::println);
    }

    private static void measure(List<String> report, String what, FileSystem sealedFs, Operation operation,
            int generated, int unwrapped) throws IOException {
        S3AFileSystem inner = (S3AFileSystem) ((SealedFileSystem) sealedFs).getWrappedFileSystem();
        int generateBefore = kms.requests("GenerateDataKey");
        int decryptBefore = kms.requests("Decrypt");
        org.apache.hadoop.fs.statistics.IOStatisticsSnapshot before = Requests.snapshot(inner);
        operation.run(sealedFs, "ss3a://" + S3Server.BUCKET + "/requests/sealed");
        Requests sealed = Requests.since(inner, before);
        int generates = kms.requests("GenerateDataKey") - generateBefore;
        int decrypts = kms.requests("Decrypt") - decryptBefore;
        before = Requests.snapshot(s3a);
        operation.run(s3a, "s3a://" + S3Server.BUCKET + "/requests/plain");
        Requests plain = Requests.since(s3a, before);
        report.add(what + ": sealed " + sealed + ", KMS GenerateDataKey " + generates + ", Decrypt " + decrypts
                + "; plain " + plain);
        assertTrue(plain.head() + plain.get() + plain.list() + plain.put() > 0, "a positive control: plain S3A made requests: "
                + what);
        assertEquals(plain.head(), sealed.head(), "HEAD: " + what);
        assertEquals(plain.list(), sealed.list(), "LIST: " + what);
        assertEquals(plain.put(), sealed.put(), "PUT: " + what);
        assertTrue(sealed.get() <= plain.get() + 1, "GET: " + what + ": sealed " + sealed + ", plain " + plain);
        assertEquals(generated, generates, "GenerateDataKey: " + what);
        assertEquals(unwrapped, decrypts, "Decrypt: " + what);
    }

    /**
     * A rotation: the alias moved to a new key. New files name the new key's ARN; old files open
     * once the old key is listed as one the alias named before (sealpipe.fs.kms.aws.previous.keys),
     * and not without: a file does not choose the key that unwraps it.
     */
    @Test
    void aliasMovedToANewKeyOldFilesReadWithThePreviousKeyNewFilesUseTheNewOne() throws Exception {
        kms.updateAlias(AwsKmsServer.ALIAS_ROTATING, AwsKmsServer.KEY_MAIN);
        byte[] before = data(5000, 11);
        byte[] after = data(5000, 12);
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS_ROTATING, kms.endpoint()))) {
            write(fs, sealedPath("rotating/before"), before);
        }
        kms.updateAlias(AwsKmsServer.ALIAS_ROTATING, AwsKmsServer.KEY_NEXT);
        Configuration rotated = conf(AwsKmsServer.ALIAS_ROTATING, kms.endpoint());
        try (FileSystem fs = sealed(rotated)) {
            write(fs, sealedPath("rotating/after"), after);
            assertArrayEquals(after, read(fs, sealedPath("rotating/after")));
        }
        IOException e = failsToRead(AwsKmsServer.ALIAS_ROTATING, kms.endpoint(), "rotating/before");
        assertTrue(messages(e).contains(AwsEnvelopeKms.PREVIOUS_KEYS) && messages(e).contains(
                AwsKmsServer.arn(AwsKmsServer.KEY_MAIN)), "says which key wrapped it and what to set: " + messages(e));
        rotated.set(AwsEnvelopeKms.PREVIOUS_KEYS, AwsKmsServer.arn(AwsKmsServer.KEY_MAIN));
        try (FileSystem fs = sealed(rotated)) {
            assertArrayEquals(before, read(fs, sealedPath("rotating/before")), "an old file, under the previous key");
            assertArrayEquals(after, read(fs, sealedPath("rotating/after")));
        }
        assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_MAIN), envelope("rotating/before", before.length).versionName());
        assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_NEXT), envelope("rotating/after", after.length).versionName());
    }

    /**
     * A file sealed under someone else's KMS key, with a data key generated under this key name's
     * encryption context (anyone may do that with a key of their own) and an envelope naming this
     * key name, is refused: the KMS is asked to unwrap under the key that the key name names, not
     * the key the file names. The control: the same file opens where that key is trusted.
     */
    @Test
    void aFileUnderSomeoneElsesKeyDoesNotPassForThisKeysFile() throws Exception {
        com.fasterxml.jackson.databind.JsonNode made = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                kms.admin("GenerateDataKey", "{\"KeyId\":\"" + AwsKmsServer.KEY_OTHER + "\",\"KeySpec\":\"AES_256\","
                        + "\"EncryptionContext\":{\"sealpipe\":\"sealed-file\",\"sealpipe:key\":\"" + AwsKmsServer.ALIAS
                        + "\"}}"));
        byte[] dataKey = java.util.Base64.getDecoder().decode(made.get("Plaintext").asText());
        Envelope envelope = Envelope.of(Envelope.KIND_AWS, false, AwsKmsServer.ALIAS, made.get("KeyId").asText(),
                new byte[0], java.util.Base64.getDecoder().decode(made.get("CiphertextBlob").asText()));
        byte[] data = data(5000, 51);
        GcmStreams streams = GcmStreams.builder().key(dataKey).context(envelope.context()).build();
        try (FSDataOutputStream out = s3a.create(plainPath("forged/other-key"), true)) {
            out.write(envelope.bytes());
            try (java.io.OutputStream sealedOut = streams.encrypt(new java.io.FilterOutputStream(out) {
                @Override
                public void close() throws IOException {
                    flush(); // the envelope's stream closes it
                }
            })) {
                sealedOut.write(data);
            }
        } finally {
            streams.destroy();
            Arrays.fill(dataKey, (byte) 0);
        }
        assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_OTHER), envelope("forged/other-key", data.length).versionName());
        IOException e = failsToRead(AwsKmsServer.ALIAS, kms.endpoint(), "forged/other-key");
        assertTrue(messages(e).contains("AWS KMS answered"), messages(e));

        Configuration trusting = conf(AwsKmsServer.ALIAS, kms.endpoint());
        trusting.set(AwsEnvelopeKms.PREVIOUS_KEYS, AwsKmsServer.KEY_OTHER);
        try (FileSystem fs = sealed(trusting)) {
            assertArrayEquals(data, read(fs, sealedPath("forged/other-key")), "the control: a well-formed file of that key");
        }
    }

    /** The refusal or failure of each kind: an IOException naming the path, the key and the endpoint; nothing made. */
    @Test
    void kmsFailuresNameThePathTheKeyAndTheEndpointAndLeaveNoObject() throws Exception {
        byte[] data = data(3000, 21);
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS_DISABLED, kms.endpoint()))) {
            write(fs, sealedPath("failures/disabled-later"), data);
        }
        kms.disableKey(AwsKmsServer.KEY_DISABLE);
        try {
            IOException e = failsToCreate(AwsKmsServer.ALIAS_DISABLED, kms.endpoint(), "failures/disabled");
            assertTrue(messages(e).contains("DisabledException"), messages(e));
            e = failsToRead(AwsKmsServer.ALIAS_DISABLED, kms.endpoint(), "failures/disabled-later");
            assertTrue(messages(e).contains("DisabledException"), messages(e));
        } finally {
            kms.enableKey(AwsKmsServer.KEY_DISABLE);
        }

        IOException e = failsToCreate("alias/no-such-key", kms.endpoint(), "failures/not-found");
        assertTrue(messages(e).contains("NotFoundException"), messages(e));

        String down = AwsKmsServer.endpointOfNoServer();
        e = failsToCreate(AwsKmsServer.ALIAS, down, "failures/down");
        assertTrue(messages(e).contains(down), messages(e));
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()))) {
            write(fs, sealedPath("failures/written"), data);
        }
        e = failsToRead(AwsKmsServer.ALIAS, down, "failures/written");
        assertTrue(messages(e).contains(down), messages(e));

        kms.deny("GenerateDataKey");
        kms.deny("Decrypt");
        try {
            e = failsToCreate(AwsKmsServer.ALIAS, kms.endpoint(), "failures/denied");
            assertTrue(e instanceof AccessControlException && messages(e).contains("kms:GenerateDataKey"), messages(e));
            e = failsToRead(AwsKmsServer.ALIAS, kms.endpoint(), "failures/written");
            assertTrue(e instanceof AccessControlException && messages(e).contains("AccessDeniedException"), messages(e));
        } finally {
            kms.allowAll();
        }
    }

    /**
     * The encryption context binds a data key to the key name: a wrapped key taken from a file of
     * another alias of the same KMS key, put in a file of this one, is refused by the KMS.
     */
    @Test
    void aDataKeyFromAnotherContextDoesNotOpen() throws Exception {
        byte[] data = data(3000, 31);
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()))) {
            write(fs, sealedPath("context/mine"), data);
        }
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS_TWIN, kms.endpoint()))) {
            write(fs, sealedPath("context/twin"), data);
        }
        Envelope mine = envelope("context/mine", data.length);
        Envelope twin = envelope("context/twin", data.length);
        assertEquals(mine.versionName(), twin.versionName(), "both aliases name the same KMS key");
        byte[] stored;
        try (InputStream in = s3a.open(plainPath("context/mine"))) {
            stored = in.readAllBytes();
        }
        byte[] forged = mine.rewrapped(twin.versionName(), twin.iv(), twin.wrappedKey()).bytes();
        System.arraycopy(forged, 0, stored, 0, forged.length);
        try (FSDataOutputStream out = s3a.create(plainPath("context/forged"), true)) {
            out.write(stored);
        }
        IOException e = failsToRead(AwsKmsServer.ALIAS, kms.endpoint(), "context/forged");
        assertTrue(messages(e).contains("InvalidCiphertextException"), messages(e));
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS, kms.endpoint()))) {
            assertArrayEquals(data, read(fs, sealedPath("context/mine")), "the control: the file it was spliced into reads");
        }
    }

    /**
     * The command line as a user runs it (the CLI jar with Hadoop's class path, S3A's settings in
     * a core-site.xml): encrypt, inspect (no KMS call), decrypt, and rewrap of files on S3 after
     * the alias moved to a new key, through ReEncrypt, once per data key.
     */
    @Test
    void theCommandLineEncryptsInspectsDecryptsAndRewrapsUnderAwsKms() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createDirectories(java.nio.file.Path.of("target", "aws-cli"));
        java.nio.file.Path plain = dir.resolve("plain.bin");
        byte[] data = data(200_000, 41);
        java.nio.file.Files.write(plain, data);
        java.nio.file.Path sealed = dir.resolve("sealed.bin");
        java.nio.file.Files.deleteIfExists(sealed);
        String[] kmsOptions = {"--kms", "aws", "--kms-endpoint", kms.endpoint(), "--key-name", AwsKmsServer.ALIAS_CLI};
        cli(dir, "encrypt", "--key-mode", "envelope", kmsOptions, plain.toString(), sealed.toString());

        int before = kms.requests();
        String report = cli(dir, "inspect", "--json", new String[0], sealed.toString());
        assertEquals(before, kms.requests(), "inspect asks the KMS nothing");
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(report);
        assertEquals("aws-kms", json.get("kms_kind").asText(), report);
        assertEquals(AwsKmsServer.ALIAS_CLI, json.get("key_name").asText(), report);
        assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_MAIN), json.get("key_arn").asText(), report);
        assertEquals("sealed-file", json.get("encryption_context").get("sealpipe").asText(), report);
        assertEquals(AwsKmsServer.ALIAS_CLI, json.get("encryption_context").get("sealpipe:key").asText(), report);

        java.nio.file.Path decrypted = dir.resolve("decrypted.bin");
        java.nio.file.Files.deleteIfExists(decrypted);
        cli(dir, "decrypt", "--key-mode", "envelope", kmsOptions, sealed.toString(), decrypted.toString());
        assertArrayEquals(data, java.nio.file.Files.readAllBytes(decrypted));

        // The CLI's file is a sealed file: put on S3 as it is, the file system reads it.
        try (FSDataOutputStream out = s3a.create(plainPath("cli/from-cli.bin"), true)) {
            out.write(java.nio.file.Files.readAllBytes(sealed));
        }
        try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS_CLI, kms.endpoint()))) {
            assertArrayEquals(data, read(fs, sealedPath("cli/from-cli.bin")));
            write(fs, sealedPath("cli/a"), data(1000, 42));
            write(fs, sealedPath("cli/b"), data(1000, 43));
        }

        kms.updateAlias(AwsKmsServer.ALIAS_CLI, AwsKmsServer.KEY_NEXT);
        try {
            int reEncrypts = kms.requests("ReEncrypt");
            int decrypts = kms.requests("Decrypt");
            String rewrap = cli(dir, "rewrap", "--kms", "aws", new String[] {"--kms-endpoint", kms.endpoint(),
                "--kms-previous-key", AwsKmsServer.arn(AwsKmsServer.KEY_MAIN)}, "s3a://" + S3Server.BUCKET + "/cli/");
            assertTrue(rewrap.contains("rewrapped 3"), rewrap);
            assertEquals(2, kms.requests("ReEncrypt") - reEncrypts, "one ReEncrypt per data key: the CLI's, the file system's");
            assertEquals(0, kms.requests("Decrypt") - decrypts, "the data keys never left the KMS");
            for (String p : List.of("cli/from-cli.bin", "cli/a", "cli/b")) {
                FileStatus status = s3a.getFileStatus(plainPath(p));
                assertEquals(AwsKmsServer.arn(AwsKmsServer.KEY_NEXT),
                        envelope(p, GcmStreams.plaintextLength(status.getLen() - Envelope.LENGTH)).versionName(), p);
            }
            try (FileSystem fs = sealed(conf(AwsKmsServer.ALIAS_CLI, kms.endpoint()))) {
                assertArrayEquals(data, read(fs, sealedPath("cli/from-cli.bin")), "rewrapped, read under the new key");
                assertArrayEquals(data(1000, 42), read(fs, sealedPath("cli/a")));
            }
        } finally {
            kms.updateAlias(AwsKmsServer.ALIAS_CLI, AwsKmsServer.KEY_MAIN);
        }
    }

    /**
     * Runs {@code sealpipe COMMAND OPTIONS... MORE OPTIONS... ARGS...} in a JVM of its own: the
     * CLI jar, then this test's class path (Hadoop, S3A and its SDK bundle, as {@code hadoop
     * classpath} gives), with a core-site.xml of S3A's settings for S3Proxy in {@code dir}.
     * Returns its standard output; fails with its output if it exits other than 0.
     */
    private static String cli(java.nio.file.Path dir, String command, Object... args) throws Exception {
        java.nio.file.Path conf = java.nio.file.Files.createDirectories(dir.resolve("conf"));
        Configuration site = new Configuration(false);
        s3.configure(site);
        try (java.io.OutputStream out = java.nio.file.Files.newOutputStream(conf.resolve("core-site.xml"))) {
            site.writeXml(out);
        }
        List<String> line = new ArrayList<>(List.of(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-cp", conf.toAbsolutePath() + java.io.File.pathSeparator + cliJar()
                + java.io.File.pathSeparator + System.getProperty("surefire.test.class.path",
                        System.getProperty("java.class.path")), "io.sealpipe.cli.Main", command));
        for (Object arg : args) {
            if (arg instanceof String[] many) {
                line.addAll(List.of(many));
            } else {
                line.add((String) arg);
            }
        }
        java.nio.file.Path out = dir.resolve(command + ".out");
        java.nio.file.Path err = dir.resolve(command + ".err");
        Process process = new ProcessBuilder(line).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        boolean ended = process.waitFor(5, java.util.concurrent.TimeUnit.MINUTES);
        if (!ended) {
            process.destroyForcibly();
        }
        String output = java.nio.file.Files.readString(out);
        String both = output + java.nio.file.Files.readString(err);
        assertTrue(ended, "sealpipe " + command + " did not end in 5 minutes:\n" + both);
        assertEquals(0, process.exitValue(), "sealpipe " + command + ":\n" + both);
        return output;
    }

    private static String cliJar() {
        String jar = System.getProperty("sealpipe.it.cli.jar", "");
        assertTrue(java.nio.file.Files.isRegularFile(java.nio.file.Path.of(jar)), "the CLI jar, sealpipe.it.cli.jar: "
                + jar + " (mvn package makes it)");
        return jar;
    }

    private static IOException failsToCreate(String alias, String endpoint, String p) throws Exception {
        try (FileSystem fs = sealed(conf(alias, endpoint))) {
            IOException e = assertThrows(IOException.class, () -> write(fs, sealedPath(p), new byte[10]));
            String messages = messages(e);
            assertTrue(messages.contains(p) && messages.contains(alias) && messages.contains(endpoint), messages);
            assertFalse(s3a.exists(plainPath(p)), p + ": a failed create left an object");
            return e;
        }
    }

    private static IOException failsToRead(String alias, String endpoint, String p) throws Exception {
        try (FileSystem fs = sealed(conf(alias, endpoint))) {
            List<byte[]> got = new ArrayList<>();
            IOException e = assertThrows(IOException.class, () -> {
                try (InputStream in = fs.open(sealedPath(p))) {
                    byte[] b = new byte[100];
                    int n = in.read(b);
                    got.add(Arrays.copyOf(b, Math.max(n, 0)));
                }
            });
            assertEquals(List.of(), got, "no byte of data");
            String messages = messages(e);
            assertTrue(messages.contains(p) && messages.contains(alias) && messages.contains(endpoint), messages);
            return e;
        }
    }
}
