package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * {@link SealedFileSystem} in envelope mode ({@code sealpipe.fs.key.mode=envelope}, {@code sfile}
 * over the local file system) against Hadoop's KMS server with the ACLs of a secured cluster: a
 * kms-acls.xml in the KMS's configuration directory, key authorization on, simple authentication
 * with the user of each call chosen by {@code UserGroupInformation.doAs}.
 *
 * <ul>
 *   <li>{@code admin} may create, get and manage the key {@value #KEY} (256 bits);
 *   <li>{@code writer} may only generate and decrypt its data keys ({@code GENERATE_EEK}, {@code
 *       DECRYPT_EEK}), {@code reader} only decrypt them, {@code other} neither;
 *   <li>nobody but {@code admin} may {@code GET}, {@code GET_METADATA}, {@code GET_KEYS} or
 *       {@code READ} the key.
 * </ul>
 *
 * The writer writes and reads, the reader reads, the other user lists with the right lengths but
 * can neither open nor create; direct mode fails saying to set envelope mode. The KMS's audit log
 * ({@code kms-audit.log} in its directory) shows only data-key operations by those users, and
 * its meters count the requests each job costs. A reader's {@code DECRYPT_EEK} revoked in
 * kms-acls.xml stops its next open.
 */
class KmsEnvelopeAclTest {
    private static final String KEY = "data";
    private static final int CHUNK = 16 * 1024;
    /** The first bytes of an envelope file (docs/FORMAT.md, "Envelope files"). */
    private static final byte[] ENVELOPE_MAGIC = {(byte) 0x89, 'S', 'P', 'E', 'N', 'V', '\r', '\n'};
    private static final int ENVELOPE = 512;
    /** The operations that read the key itself (its material, metadata or name): none but the admin's. */
    private static final Set<String> KEY_READS = Set.of("GET_KEY_VERSION", "GET_CURRENT_KEY", "GET_KEY_VERSIONS",
            "GET_METADATA", "GET_KEYS", "GET_KEYS_METADATA", "READ");
    private static final Set<String> DATA_KEY_OPS = Set.of("GENERATE_EEK", "DECRYPT_EEK");

    private static final UserGroupInformation ADMIN = UserGroupInformation.createRemoteUser("admin");
    private static final UserGroupInformation WRITER = UserGroupInformation.createRemoteUser("writer");
    private static final UserGroupInformation READER = UserGroupInformation.createRemoteUser("reader");
    private static final UserGroupInformation OTHER = UserGroupInformation.createRemoteUser("other");
    private static final Set<String> NOT_ADMIN = Set.of("writer", "reader", "other");

    private Kms kms;
    private java.nio.file.Path dir;
    private final List<UserFileSystem> opened = new ArrayList<>();

    /** A user's own sealed file system: every call on it is made as that user. */
    private record UserFileSystem(UserGroupInformation user, FileSystem fs) {}

    /** The ACLs of a secured KMS for this test, {@code reader} with {@code DECRYPT_EEK} on the key or not. */
    private static Configuration acls(boolean readerDecrypts) {
        Configuration acls = new Configuration(false);
        for (String op : List.of("CREATE", "DELETE", "ROLLOVER", "GET", "GET_KEYS", "GET_METADATA", "SET_KEY_MATERIAL")) {
            acls.set("hadoop.kms.acl." + op, "admin");
        }
        acls.set("hadoop.kms.acl.GENERATE_EEK", "writer");
        acls.set("hadoop.kms.acl.DECRYPT_EEK", "writer,reader");
        acls.set("key.acl." + KEY + ".MANAGEMENT", "admin");
        acls.set("key.acl." + KEY + ".READ", "admin");
        acls.set("key.acl." + KEY + ".GENERATE_EEK", "writer");
        // A revocation on the key only (its hadoop.kms.acl still lets reader ask): the KMS refuses in
        // its key authorization, a path of its own.
        acls.set("key.acl." + KEY + ".DECRYPT_EEK", readerDecrypts ? "writer,reader" : "writer");
        return acls;
    }

    @BeforeEach
    void startKms(TestInfo test) throws Exception {
        String name = test.getTestMethod().orElseThrow().getName();
        kms = Kms.start(Kms.dir("envelope-acl-" + name), acls(true));
        as(ADMIN, () -> {
            kms.createKey(KEY, 256);
            return null;
        });
        dir = java.nio.file.Path.of("target", "kms-envelope-acl", name).toAbsolutePath();
        TestFiles.deleteRecursively(dir);
        Files.createDirectories(dir);
    }

    @AfterEach
    void stopKms() throws IOException {
        try {
            for (UserFileSystem u : opened) {
                u.fs().close();
            }
            for (UserGroupInformation user : List.of(ADMIN, WRITER, READER, OTHER)) {
                FileSystem.closeAllForUGI(user); // the wrapped local file systems, cached per user
            }
        } finally {
            if (kms != null) {
                kms.stop();
            }
        }
    }

    /** {@code action} as {@code user}: the KMS client names that user in each request. */
    private static <T> T as(UserGroupInformation user, PrivilegedExceptionAction<T> action)
            throws IOException, InterruptedException {
        return user.doAs(action);
    }

    /** A sealed file system of {@code user}'s own, in envelope or direct mode, with {@code extra} settings. */
    private UserFileSystem sealed(UserGroupInformation user, boolean envelope, Consumer<Configuration> extra)
            throws IOException, InterruptedException {
        Configuration conf = new Configuration();
        conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
        conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, kms.uri().toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
        if (envelope) {
            conf.set(SealedFileSystem.KEY_MODE, "envelope");
        }
        extra.accept(conf);
        FileSystem fs = as(user, () -> FileSystem.newInstance(URI.create("sfile:///"), conf));
        assertInstanceOf(SealedFileSystem.class, fs);
        UserFileSystem made = new UserFileSystem(user, fs);
        opened.add(made);
        return made;
    }

    private UserFileSystem sealed(UserGroupInformation user) throws IOException, InterruptedException {
        return sealed(user, true, conf -> { });
    }

    private Path sealedPath(String name) {
        return new Path("sfile://" + dir.resolve(name));
    }

    private static byte[] data(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    private void write(UserFileSystem u, String name, byte[] data) throws IOException, InterruptedException {
        as(u.user(), () -> {
            try (FSDataOutputStream out = u.fs().create(sealedPath(name), false)) {
                out.write(data);
            }
            return null;
        });
    }

    private byte[] read(UserFileSystem u, String name) throws IOException, InterruptedException {
        return as(u.user(), () -> {
            try (FSDataInputStream in = u.fs().open(sealedPath(name))) {
                return in.readAllBytes();
            }
        });
    }

    /** The envelope (the first 512 stored bytes) of each stored file named: one per data key that sealed them. */
    private Set<ByteBuffer> envelopes(Iterable<String> names) throws IOException {
        Set<ByteBuffer> envelopes = new HashSet<>();
        for (String name : names) {
            byte[] stored = Files.readAllBytes(dir.resolve(name));
            envelopes.add(ByteBuffer.wrap(Arrays.copyOf(stored, ENVELOPE)));
        }
        return envelopes;
    }

    /** The audit entries of {@code users} that read the key itself: none may be there but the admin's. */
    private static List<Kms.AuditEntry> keyReads(List<Kms.AuditEntry> audit, Set<String> users) {
        return audit.stream().filter(e -> users.contains(e.user()) && KEY_READS.contains(e.op())).toList();
    }

    /** What {@code user} did according to the audit log: "STATUS OP" for each kind of entry. */
    private static Set<String> auditedOps(List<Kms.AuditEntry> audit, String user) {
        return audit.stream().filter(e -> user.equals(e.user())).map(e -> e.status() + " " + e.op())
                .collect(Collectors.toCollection(java.util.TreeSet::new));
    }

    private void assertNamesKeyAndKms(AccessControlException e) {
        String message = e.getMessage();
        assertTrue(message.contains("'" + KEY + "'"), () -> "the key is not named: " + message);
        assertTrue(message.contains(kms.uri().toString()), () -> "the KMS is not named: " + message);
    }

    private static void keep(String what, String text) throws IOException {
        java.nio.file.Path file = java.nio.file.Path.of("target", "kms", "envelope-acl-" + what + ".txt");
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        System.err.print(text);
    }

    @Test
    void aWriterAndAReaderNeedOnlyDataKeyCallsAndAnotherUserListsButCannotOpenOrCreate() throws Exception {
        Map<String, byte[]> files = new LinkedHashMap<>();
        for (int size : new int[] {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 77, 100_000}) {
            files.put("f" + size, data(size, size));
        }
        StringBuilder report = new StringBuilder();

        // The KMS's meters of the requests about the key itself (versions, current version,
        // metadata, names), marked before the ACL check: refused ones count too.
        long keyCalls = Kms.calls();

        // The writer writes envelope files and reads them back.
        UserFileSystem writer = sealed(WRITER);
        long generate = Kms.generateEekCalls();
        long decrypt = Kms.decryptEekCalls();
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            write(writer, f.getKey(), f.getValue());
        }
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            assertArrayEquals(f.getValue(), read(writer, f.getKey()), "read back by the writer: " + f.getKey());
            byte[] stored = Files.readAllBytes(dir.resolve(f.getKey()));
            assertEquals(ENVELOPE + GcmStreams.ciphertextLength(f.getValue().length), stored.length, f.getKey());
            assertArrayEquals(ENVELOPE_MAGIC, Arrays.copyOf(stored, ENVELOPE_MAGIC.length),
                    "an envelope file: " + f.getKey());
        }
        report.append(String.format("writer, %d files written and read back: %d GENERATE_EEK, %d DECRYPT_EEK requests%n",
                files.size(), Kms.generateEekCalls() - generate, Kms.decryptEekCalls() - decrypt));

        // The reader reads them all.
        UserFileSystem reader = sealed(READER);
        decrypt = Kms.decryptEekCalls();
        for (Map.Entry<String, byte[]> f : files.entrySet()) {
            assertArrayEquals(f.getValue(), read(reader, f.getKey()), "read by the reader: " + f.getKey());
        }
        report.append(String.format("reader, %d files read: %d DECRYPT_EEK requests%n", files.size(),
                Kms.decryptEekCalls() - decrypt));

        // The other user lists them with their lengths, but opens and creates nothing.
        UserFileSystem other = sealed(OTHER);
        FileStatus[] listed = as(OTHER, () -> other.fs().listStatus(sealedPath("")));
        Map<String, Long> lengths = new LinkedHashMap<>();
        for (FileStatus status : listed) {
            lengths.put(status.getPath().getName(), status.getLen());
        }
        Map<String, Long> expected = new LinkedHashMap<>();
        files.forEach((name, content) -> expected.put(name, (long) content.length));
        assertEquals(expected.keySet(), lengths.keySet(), "the files listed");
        for (String name : files.keySet()) {
            assertEquals(expected.get(name), lengths.get(name), "the length of " + name + " listed by the other user");
            assertEquals(expected.get(name), as(OTHER, () -> other.fs().getFileStatus(sealedPath(name)).getLen()), name);
        }
        decrypt = Kms.decryptEekCalls();
        long refused = Kms.unauthorizedCalls();
        AccessControlException opening = null;
        for (String name : files.keySet()) {
            AccessControlException e = assertThrows(AccessControlException.class, () -> read(other, name),
                    "the other user opened " + name);
            assertNamesKeyAndKms(e);
            assertTrue(e.getMessage().contains(dir.resolve(name).toString()), e::getMessage);
            opening = e;
        }
        report.append(String.format("other, %d files opened: %d DECRYPT_EEK requests, %d refused; the last: %s%n",
                files.size(), Kms.decryptEekCalls() - decrypt, Kms.unauthorizedCalls() - refused, opening));
        // (That the refusal to create is an AccessControlException too: aFileSystemWithoutGenerateEekCreatesNothing.)
        refused = Kms.unauthorizedCalls();
        IOException creating = assertThrows(IOException.class, () -> write(other, "by-other", data(10, 1)),
                "the other user created a file");
        assertFalse(Files.exists(dir.resolve("by-other")), "a file was made without a data key");
        report.append(String.format("other, 1 file created: %d refused; %s%n", Kms.unauthorizedCalls() - refused, creating));
        long keyCallsMade = Kms.calls() - keyCalls;
        report.append(String.format("writer, reader and other: %d requests about the key itself (key and admin calls)%n",
                keyCallsMade));
        keep("users", report.toString());
        assertEquals(0, keyCallsMade, report::toString);

        // What the KMS saw: data-key operations only, by the users allowed them.
        List<Kms.AuditEntry> audit = kms.audit();
        String log = Files.readString(kms.auditLog());
        assertTrue(audit.stream().anyMatch(e -> e.status().equals("OK") && "CREATE_KEY".equals(e.op())
                && KEY.equals(e.key()) && "admin".equals(e.user())),
                () -> "no CREATE_KEY by the admin in the audit log:\n" + log);
        assertEquals(Set.of("OK GENERATE_EEK", "OK DECRYPT_EEK"), auditedOps(audit, "writer"), log);
        assertEquals(Set.of("OK DECRYPT_EEK"), auditedOps(audit, "reader"), log);
        assertEquals(Set.of("UNAUTHORIZED GENERATE_EEK", "UNAUTHORIZED DECRYPT_EEK"), auditedOps(audit, "other"), log);
        assertEquals(List.of(), keyReads(audit, NOT_ADMIN), () -> "the key read by a user:\n" + log);
        for (String user : NOT_ADMIN) {
            assertTrue(audit.stream().filter(e -> user.equals(e.user())).allMatch(e -> DATA_KEY_OPS.contains(e.op())), log);
        }
    }

    /**
     * A user without GENERATE_EEK creates no file, and learns that the KMS refused: an {@link
     * AccessControlException} naming the key and the KMS, as docs/sealed-files.md ("Keys in a
     * KMS") promises, not an outage's IOException.
     */
    @Test
    void aFileSystemWithoutGenerateEekCreatesNothing() throws Exception {
        for (UserGroupInformation user : List.of(OTHER, READER)) {
            UserFileSystem fs = sealed(user);
            String name = "by-" + user.getShortUserName();
            IOException creating = assertThrows(IOException.class, () -> write(fs, name, data(10, 1)),
                    user + " created a file");
            assertFalse(Files.exists(dir.resolve(name)), "a file was made without a data key");
            assertInstanceOf(AccessControlException.class, creating, () -> "not a refusal: " + creating);
            assertNamesKeyAndKms((AccessControlException) creating);
            assertTrue(creating.getMessage().contains(dir.resolve(name).toString()), creating::getMessage);
        }
    }

    /**
     * What N files cost in KMS requests, counted by the KMS's meters. Hadoop's KMS client keeps a
     * queue of wrapped keys per key and fills it in batches (by default 150 at once when first
     * asked, then a refill in the background up to 500), so its requests would not tell a data
     * key per file from one for all. sealpipe asks past that queue ({@code KmsGeneration}):
     * exactly one GENERATE_EEK per data key, with no refill in the background. DECRYPT_EEK has no
     * queue: one request per unwrap.
     */
    @Test
    void twentyFilesCostOneDataKeyAndAFreshReaderOneUnwrap() throws Exception {
        int n = 20;
        // The defaults: sealpipe's KMS client asks for one wrapped key at a time by itself.
        Consumer<Configuration> defaults = conf -> { };
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add("f" + i);
        }
        StringBuilder report = new StringBuilder();

        UserFileSystem writer = sealed(WRITER, true, defaults);
        long generate = Kms.generateEekCalls();
        long decrypt = Kms.decryptEekCalls();
        for (int i = 0; i < n; i++) {
            write(writer, names.get(i), data(100 + i * 1000, i));
        }
        for (int i = 0; i < n; i++) {
            assertArrayEquals(data(100 + i * 1000, i), read(writer, names.get(i)));
        }
        long writerGenerate = Kms.generateEekCalls() - generate;
        long writerDecrypt = Kms.decryptEekCalls() - decrypt;
        int dataKeys = envelopes(names).size();
        report.append(String.format("writer, %d files written and read back: %d data key(s), %d GENERATE_EEK,"
                + " %d DECRYPT_EEK requests%n", n, dataKeys, writerGenerate, writerDecrypt));

        UserFileSystem reader = sealed(READER);
        decrypt = Kms.decryptEekCalls();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(data(100 + i * 1000, i), read(reader, names.get(i)));
        }
        long readerDecrypt = Kms.decryptEekCalls() - decrypt;
        report.append(String.format("a fresh reader, %d files read: %d DECRYPT_EEK requests%n", n, readerDecrypt));

        // Controls: the counts see a call per file where there is one.
        UserFileSystem unkept = sealed(READER, true, conf -> conf.setInt(SealedFileSystem.DATA_KEY_READ_KEYS, 0));
        decrypt = Kms.decryptEekCalls();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(data(100 + i * 1000, i), read(unkept, names.get(i)));
        }
        long unkeptDecrypt = Kms.decryptEekCalls() - decrypt;
        report.append(String.format("a reader keeping no data key (%s=0), %d files read: %d DECRYPT_EEK requests%n",
                SealedFileSystem.DATA_KEY_READ_KEYS, n, unkeptDecrypt));
        UserFileSystem perFile = sealed(WRITER, true, defaults.andThen(
                conf -> conf.setLong(SealedFileSystem.DATA_KEY_WRITE_FILES, 0)));
        List<String> perFileNames = new ArrayList<>();
        generate = Kms.generateEekCalls();
        decrypt = Kms.decryptEekCalls();
        for (int i = 0; i < n; i++) {
            perFileNames.add("g" + i);
            write(perFile, "g" + i, data(100, i));
        }
        long perFileGenerate = Kms.generateEekCalls() - generate;
        long perFileDecrypt = Kms.decryptEekCalls() - decrypt;
        int perFileDataKeys = envelopes(perFileNames).size();
        report.append(String.format("a writer with a data key per file (%s=0), %d files written: %d data keys,"
                + " %d GENERATE_EEK, %d DECRYPT_EEK requests%n", SealedFileSystem.DATA_KEY_WRITE_FILES, n, perFileDataKeys,
                perFileGenerate, perFileDecrypt));
        keep("calls", report.toString());

        // One data key for all 20 files: one GENERATE_EEK request, and its one unwrap, its own files
        // then costing it none.
        assertEquals(1, dataKeys, report::toString);
        assertEquals(1, writerGenerate, report::toString);
        assertEquals(1, writerDecrypt, report::toString);
        // A reader unwraps the one data key once, and keeps it for the other 19.
        assertEquals(1, readerDecrypt, report::toString);
        assertEquals(n, unkeptDecrypt, report::toString);
        // A data key per file: a request each, and an unwrap each.
        assertEquals(n, perFileDataKeys, report::toString);
        assertEquals(n, perFileGenerate, report::toString);
        assertEquals(n, perFileDecrypt, report::toString);
    }

    /**
     * A {@code kms://} URI of several hosts ({@code host1;host2:port}), as a KMS behind several
     * servers is named: each request goes to the hosts in turn and to the next when one fails.
     * Here the host listed first, 127.0.0.2, has no server (connections refused, a KMS down) and
     * 127.0.0.1 is the KMS. Every file is written and read back, and each data key still costs
     * one GENERATE_EEK and one DECRYPT_EEK. The hosts are tried first in turn, so every other
     * generation meets the dead host first: sealpipe logs each such failover.
     */
    @Test
    void severalKmsHostsOneOfThemDown() throws Exception {
        URI one = kms.uri();
        String hosts = "kms://http@127.0.0.2;127.0.0.1:" + one.getPort() + one.getPath();
        int n = 6;
        Consumer<Configuration> twoHosts = conf -> conf.set(SealedFileSystem.KEY_PROVIDER_PATH, hosts);
        UserFileSystem writer = sealed(WRITER, true, twoHosts.andThen(
                conf -> conf.setLong(SealedFileSystem.DATA_KEY_WRITE_FILES, 0)));
        Logs.install();
        int mark = Logs.mark();
        long generate = Kms.generateEekCalls();
        long decrypt = Kms.decryptEekCalls();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            names.add("h" + i);
            write(writer, "h" + i, data(1000 + i, i));
        }
        List<String> failovers = Logs.sealpipe(Logs.since(mark)).stream()
                .filter(line -> line.contains("127.0.0.2") && line.contains("trying the next of its hosts")).toList();
        long written = Kms.generateEekCalls() - generate;
        long unwrapped = Kms.decryptEekCalls() - decrypt;
        UserFileSystem reader = sealed(READER, true, twoHosts);
        decrypt = Kms.decryptEekCalls();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(data(1000 + i, i), read(reader, "h" + i));
        }
        long read = Kms.decryptEekCalls() - decrypt;
        String report = String.format("%s, %d files, a data key each: written with %d GENERATE_EEK and %d DECRYPT_EEK"
                + " (%d generations met the dead host first), read by a fresh reader with %d DECRYPT_EEK%n%s%n", hosts, n,
                written, unwrapped, failovers.size(), read, String.join("\n", failovers));
        keep("hosts", report);
        assertEquals(n / 2, failovers.size(), report);
        assertEquals(n, envelopes(names).size(), report);
        assertEquals(n, written, report);
        assertEquals(n, unwrapped, report);
        assertEquals(n, read, report);
    }

    /** Direct mode needs GET_METADATA and GET: refused, with the way out in the message. */
    @Test
    void directModeIsRefusedAndSaysToSetEnvelopeMode() throws Exception {
        IOException starting = assertThrows(IOException.class, () -> sealed(WRITER, false, conf -> { }),
                "a direct-mode file system started without GET_METADATA");
        assertInstanceOf(AccessControlException.class, starting, starting::toString);
        String message = starting.getMessage();
        assertTrue(message.contains(SealedFileSystem.KEY_MODE + "=envelope"), message);
        assertTrue(message.contains("'" + KEY + "'") && message.contains(kms.uri().toString()), message);

        // The check of point 5 sees such requests: the writer's refused GET_METADATA, and the key
        // read by the admin's direct-mode file system (its metadata, versions and current version).
        UserFileSystem admin = sealed(ADMIN, false, conf -> { });
        write(admin, "direct", data(CHUNK + 3, 1));
        assertArrayEquals(data(CHUNK + 3, 1), read(admin, "direct"));
        List<Kms.AuditEntry> audit = kms.audit();
        String log = Files.readString(kms.auditLog());
        List<Kms.AuditEntry> writerReads = keyReads(audit, Set.of("writer"));
        assertEquals(List.of("UNAUTHORIZED GET_METADATA"), writerReads.stream().map(e -> e.status() + " " + e.op()).toList(),
                log);
        Set<String> adminReads = keyReads(audit, Set.of("admin")).stream().map(e -> e.status() + " " + e.op())
                .collect(Collectors.toSet());
        assertTrue(adminReads.contains("OK GET_METADATA") && adminReads.contains("OK GET_CURRENT_KEY"), log);
        keep("direct", "direct mode, in the audit log: writer " + auditedOps(audit, "writer")
                + ", admin " + auditedOps(audit, "admin") + "\n");
    }

    /**
     * The reader's DECRYPT_EEK revoked in kms-acls.xml: a file opened before reads on (its key
     * was unwrapped when it was opened), a file system that keeps no data key fails its next
     * open, one that kept the data key goes on opening its files until the key's time is up
     * ({@code sealpipe.fs.data.key.read.seconds}), and the writer still reads.
     */
    @Test
    void aRevokedDecryptStopsTheNextOpenOfAReaderThatKeepsNoDataKey() throws Exception {
        byte[] a = data(CHUNK + 5, 1);
        byte[] b = data(3 * CHUNK + 9, 2);
        byte[] c = data(2 * CHUNK, 3);
        UserFileSystem writer = sealed(WRITER);
        write(writer, "a", a);
        write(writer, "b", b);
        write(writer, "c", c);
        UserFileSystem unkept = sealed(READER, true, conf -> conf.setInt(SealedFileSystem.DATA_KEY_READ_KEYS, 0));
        UserFileSystem kept = sealed(READER);
        assertArrayEquals(a, read(unkept, "a"));
        assertArrayEquals(a, read(kept, "a"));
        FSDataInputStream open = as(READER, () -> unkept.fs().open(sealedPath("b")));
        try {
            byte[] head = new byte[CHUNK + 1];
            open.readFully(head);

            kms.setAcls(acls(false));

            long decrypt = Kms.decryptEekCalls();
            AccessControlException e = assertThrows(AccessControlException.class, () -> read(unkept, "c"),
                    "opened after the reader's DECRYPT_EEK was revoked");
            assertEquals(1, Kms.decryptEekCalls() - decrypt, "the open asked the KMS");
            assertNamesKeyAndKms(e);
            assertTrue(e.getMessage().contains(dir.resolve("c").toString()), e::getMessage);
            // Asked again by the next open: a refusal is not kept either.
            assertThrows(AccessControlException.class, () -> read(unkept, "a"));

            byte[] rest = open.readAllBytes();
            byte[] whole = Arrays.copyOf(head, head.length + rest.length);
            System.arraycopy(rest, 0, whole, head.length, rest.length);
            assertArrayEquals(b, whole, "the file opened before the revocation");
        } finally {
            open.close();
        }
        assertArrayEquals(c, read(kept, "c"), "a data key kept before the revocation, within its time");
        assertArrayEquals(c, read(sealed(WRITER), "c"), "a new file system of the writer, whose access stays");
        List<Kms.AuditEntry> audit = kms.audit();
        // A key's ACL that refuses logs the operation refused and ALL (which would have allowed it too).
        assertEquals(Set.of("OK DECRYPT_EEK", "UNAUTHORIZED DECRYPT_EEK", "UNAUTHORIZED ALL"), auditedOps(audit, "reader"),
                () -> "reader's entries:\n" + audit);
        assertEquals(List.of(), keyReads(audit, NOT_ADMIN));
    }
}
