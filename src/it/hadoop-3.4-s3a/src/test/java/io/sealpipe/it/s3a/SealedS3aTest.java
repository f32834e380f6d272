package io.sealpipe.it.s3a;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.it.s3.S3Server;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.MultipartUploader;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.UploadHandle;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.fs.statistics.IOStatisticsSnapshot;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;
import org.apache.hadoop.util.functional.FutureIO;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code ss3a} over S3A against S3Proxy: a sealed file of many multipart parts, writers that are
 * aborted or fail (no object, no pending upload), tampering seen through S3, and the S3
 * requests of each metadata operation and open, sealed against plain S3A on the same instance.
 */
class SealedS3aTest {
    private static final int MIB = 1 << 20;
    private static S3Server server;
    private static FileSystem sealed;
    private static S3AFileSystem s3a;

    @BeforeAll
    static void start() throws Exception {
        server = S3Server.start();
        Configuration conf = S3Files.sealedConf(server, "sealed-s3a");
        conf.set("fs.s3a.multipart.size", "8M"); // S3's least is 5 MiB
        conf.set("fs.s3a.multipart.threshold", "8M");
        conf.setBoolean("fs.ss3a.impl.disable.cache", true);
        conf.setBoolean("fs.s3a.impl.disable.cache", true);
        sealed = FileSystem.get(URI.create("ss3a://" + S3Server.BUCKET + "/"), conf);
        s3a = (S3AFileSystem) ((SealedFileSystem) sealed).getWrappedFileSystem();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (sealed != null) {
                sealed.close();
            }
            if (s3a != null) {
                s3a.close();
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    private static Path sealedPath(String p) {
        return new Path("ss3a://" + S3Server.BUCKET + "/" + p);
    }

    private static Path plainPath(String p) {
        return new Path("s3a://" + S3Server.BUCKET + "/" + p);
    }

    /** Writes {@code length} bytes of a seeded stream, in 1 MiB writes, and returns their SHA-256. */
    private static byte[] writeSeeded(FSDataOutputStream out, long length, long seed) throws IOException {
        MessageDigest sha = sha256();
        Random random = new Random(seed);
        byte[] block = new byte[MIB];
        for (long done = 0; done < length; ) {
            int n = (int) Math.min(block.length, length - done);
            random.nextBytes(block);
            out.write(block, 0, n);
            sha.update(block, 0, n);
            done += n;
        }
        return sha.digest();
    }

    private static byte[] digest(InputStream in) throws IOException {
        MessageDigest sha = sha256();
        byte[] buffer = new byte[MIB];
        for (int n; (n = in.read(buffer)) > 0; ) {
            sha.update(buffer, 0, n);
        }
        return sha.digest();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private static List<String> uploads(String prefix) throws Exception {
        return server.pendingUploads(prefix);
    }

    /**
     * The positive control of every "no upload left pending" here: an upload started through
     * Hadoop's own multipart API and left open is listed by {@link S3Server#pendingUploads}, and no
     * longer once aborted.
     */
    @Test
    void anUploadLeftOpenIsListedAsPending() throws Exception {
        Path path = plainPath("open-upload/part.bin");
        try (MultipartUploader uploader = s3a.createMultipartUploader(new Path("s3a://" + S3Server.BUCKET + "/")).build()) {
            UploadHandle upload = FutureIO.awaitFuture(uploader.startUpload(path));
            try {
                assertEquals(List.of("open-upload/part.bin"), uploads("open-upload/"), "an upload left open");
            } finally {
                FutureIO.awaitFuture(uploader.abort(upload, path));
            }
        }
        assertEquals(List.of(), uploads("open-upload/"), "the upload, aborted");
    }

    @Test
    void aSealedFileOfManyMultipartPartsReadsBackWhole() throws Exception {
        long length = 100L * MIB + 12345;
        Path path = sealedPath("multipart/big.bin");
        IOStatisticsSnapshot before = Requests.snapshot(s3a);
        byte[] written;
        try (FSDataOutputStream out = sealed.create(path, true)) {
            written = writeSeeded(out, length, 1);
        }
        Requests put = Requests.since(s3a, before);
        long stored = GcmStreams.ciphertextLength(length);
        assertTrue(put.put() >= stored / (8 * MIB), "uploaded in 8 MiB parts: " + put);
        assertEquals(stored, s3a.getFileStatus(plainPath("multipart/big.bin")).getLen());
        assertEquals(length, sealed.getFileStatus(path).getLen());
        try (FSDataInputStream in = sealed.open(path)) {
            assertArrayEquals(written, digest(in));
        }
        assertTrue(uploads("multipart/").isEmpty(), "no upload left pending");
    }

    @Test
    void anAbortedWriterLeavesNoObjectAndNoPendingUpload() throws Exception {
        for (long length : new long[] {3 * MIB, 30L * MIB}) { // one PUT, and a multipart upload
            Path path = sealedPath("aborted/" + length + ".bin");
            FSDataOutputStream out = sealed.create(path, true);
            assertTrue(out.hasCapability(StreamCapabilities.ABORTABLE_STREAM), "S3A's stream can abort, so the sealed one can");
            writeSeeded(out, length, 2);
            out.abort();
            out.close(); // does nothing after abort()
            assertFalse(sealed.exists(path), "no object for " + length + " bytes");
            assertFalse(s3a.exists(plainPath("aborted/" + length + ".bin")));
        }
        assertTrue(uploads("aborted/").isEmpty(), "no upload left pending");
    }

    @Test
    void aWriterWhoseFileSystemClosesLeavesNoObjectAndNoPendingUpload() throws Exception {
        Configuration conf = new Configuration(sealed.getConf());
        FileSystem own = FileSystem.newInstance(URI.create("ss3a://" + S3Server.BUCKET + "/"), conf);
        Path path = sealedPath("failed/closed.bin");
        FSDataOutputStream out = own.create(path, true);
        writeSeeded(out, 20L * MIB, 3);
        own.close(); // destroys its keys: the file fails at its next call and is abandoned
        IOException e = assertThrows(IOException.class, () -> out.write(new byte[10]));
        assertTrue(e.getMessage().contains("was closed while this file was being written"), e.getMessage());
        out.close();
        assertFalse(s3a.exists(plainPath("failed/closed.bin")), "no object");
        assertTrue(uploads("failed/").isEmpty(), "no upload left pending");
    }

    @Test
    void aTamperedObjectFailsOnlyTheChunkItTouches() throws Exception {
        byte[] plain = new byte[200_000];
        new Random(4).nextBytes(plain);
        Path path = sealedPath("tampered/t.bin");
        try (FSDataOutputStream out = sealed.create(path, true)) {
            out.write(plain);
        }
        byte[] stored;
        try (FSDataInputStream in = s3a.open(plainPath("tampered/t.bin"))) {
            stored = in.readAllBytes();
        }
        stored[GcmStreams.HEADER_LENGTH + 5 * (16 * 1024 + 16) + 7] ^= 1; // chunk 5
        try (FSDataOutputStream out = s3a.create(plainPath("tampered/t.bin"), true)) {
            out.write(stored);
        }
        FileRange intact = FileRange.createFileRange(0, 5 * 16 * 1024);
        FileRange bad = FileRange.createFileRange(5 * 16 * 1024 + 100, 10);
        FileRange after = FileRange.createFileRange(6 * 16 * 1024, 1000);
        long vectoredBefore = Requests.snapshot(s3a).counters().getOrDefault(StreamStatisticNames.STREAM_READ_VECTORED_OPERATIONS, 0L);
        try (FSDataInputStream in = sealed.open(path)) {
            in.readVectored(List.of(intact, bad, after), ByteBuffer::allocate);
            byte[] got = new byte[intact.getLength()];
            FutureIO.awaitFuture(intact.getData()).get(got);
            assertArrayEquals(Arrays.copyOf(plain, intact.getLength()), got);
            ExecutionException e = assertThrows(ExecutionException.class, () -> bad.getData().get());
            assertTrue(e.getCause() instanceof StreamAuthenticationException, String.valueOf(e.getCause()));
            assertEquals(1000, FutureIO.awaitFuture(after.getData()).remaining());
            assertThrows(StreamAuthenticationException.class, in::readAllBytes);
        }
        assertEquals(1, Requests.snapshot(s3a).counters().getOrDefault(StreamStatisticNames.STREAM_READ_VECTORED_OPERATIONS, 0L)
                - vectoredBefore, "one vectored read by S3A");
    }

    /** Writes the same files as plain objects and as sealed files, under {@code plain/} and {@code sealed/}. */
    private static void writeTrees(String tree, int files, int size) throws IOException {
        byte[] data = new byte[size];
        new Random(5).nextBytes(data);
        for (int i = 0; i < files; i++) {
            String name = tree + "/d" + (i % 3) + "/f" + i;
            try (FSDataOutputStream out = s3a.create(plainPath("plain/" + name), true)) {
                out.write(data);
            }
            try (FSDataOutputStream out = sealed.create(sealedPath("sealed/" + name), true)) {
                out.write(data);
            }
        }
    }

    /** One operation on the plain or the sealed file system, with the path it starts from. */
    private interface Operation {
        void run(FileSystem fs, Path path) throws IOException;
    }

    /** The requests {@code op} makes on plain S3A, then on the sealed view of the same files. */
    private static Requests[] measure(String tree, Operation op) throws IOException {
        IOStatisticsSnapshot before = Requests.snapshot(s3a);
        op.run(s3a, plainPath("plain/" + tree));
        Requests plain = Requests.since(s3a, before);
        before = Requests.snapshot(s3a);
        op.run(sealed, sealedPath("sealed/" + tree));
        Requests sealedRequests = Requests.since(s3a, before);
        return new Requests[] {plain, sealedRequests};
    }

    @Test
    void metadataOperationsAndOpensCostNoRequestBeyondPlainS3a() throws IOException {
        writeTrees("meta", 30, 40_000);
        List<String> report = new ArrayList<>();
        check(report, "getFileStatus of a file", measure("meta", (fs, p) -> fs.getFileStatus(new Path(p, "d0/f0"))), true, 1, 0);
        check(report, "listStatus of a directory of 10 files", measure("meta", (fs, p) -> fs.listStatus(new Path(p, "d1"))), true,
                0, 1);
        check(report, "listFiles, recursive, 30 files in 3 directories", measure("meta", (fs, p) -> {
            RemoteIterator<LocatedFileStatus> it = fs.listFiles(p, true);
            int n = 0;
            while (it.hasNext()) {
                it.next();
                n++;
            }
            assertEquals(30, n);
        }), true, 0, 1);
        // A file's: one HEAD, as S3A's own summary.
        check(report, "getContentSummary of a file", measure("meta", (fs, p) -> {
            assertEquals(40_000, fs.getContentSummary(new Path(p, "d0/f3")).getLength());
        }), true, 1, 0);
        // A directory's, with an empty directory two levels down, counted as S3A counts: a HEAD
        // (is it a file?) and one flat LIST, as S3A's own summary, every file's stored length in it.
        assertTrue(s3a.mkdirs(plainPath("plain/meta/d3/empty")));
        assertTrue(s3a.mkdirs(plainPath("sealed/meta/d3/empty")));
        check(report, "getContentSummary of the tree, 30 files, 5 directories (one empty)", measure("meta", (fs, p) -> {
            ContentSummary s = fs.getContentSummary(p);
            assertEquals(30, s.getFileCount());
            assertEquals(6, s.getDirectoryCount(), "the tree, d0, d1, d2, d3, d3/empty");
            assertEquals(30L * 40_000, s.getLength(), "plaintext lengths");
        }), true, 1, 1);
        check(report, "open and read 100 bytes", measure("meta", (fs, p) -> {
            try (FSDataInputStream in = fs.open(new Path(p, "d2/f2"))) {
                in.readFully(new byte[100]);
            }
        }), false, 0, 0);
        check(report, "openFile with the listed status, read 100 bytes at 20000", measure("meta", (fs, p) -> {
            FileStatus status = fs.getFileStatus(new Path(p, "d2/f5"));
            try (FSDataInputStream in = FutureIO.awaitFuture(fs.openFile(status.getPath()).withFileStatus(status)
                    .opt("fs.option.openfile.read.policy", "random").build())) {
                in.readFully(20_000, new byte[100]);
            }
        }), false, 0, 0);
        Files.write(java.nio.file.Path.of("target", "s3a-requests.txt"), report);
    }

    /**
     * Adds a line to the report and asserts: HEAD and LIST requests as plain S3A's; for a
     * metadata operation no GET either; for a read, one GET beyond plain S3A's at most (the header).
     * First, the positive control: plain S3A made at least {@code heads} HEADs and {@code lists}
     * LISTs (and a read at least one GET), so that counters that read 0 (a statistic's name that
     * no longer exists) cannot pass for equal costs.
     */
    private static void check(List<String> report, String what, Requests[] r, boolean metadata, int heads, int lists) {
        report.add(what + ": plain " + r[0] + "; sealed " + r[1]);
        assertTrue(r[0].head() >= heads && r[0].list() >= lists && (metadata || r[0].get() >= 1),
                what + ": plain S3A's requests were not counted (" + r[0] + "; at least " + heads + " HEAD, " + lists
                        + " LIST" + (metadata ? "" : ", 1 GET") + " expected)");
        assertEquals(r[0].head(), r[1].head(), what + ": HEAD requests: plain " + r[0] + ", sealed " + r[1]);
        assertEquals(r[0].list(), r[1].list(), what + ": LIST requests: plain " + r[0] + ", sealed " + r[1]);
        if (metadata) {
            assertEquals(0, r[1].get(), what + ": no GET");
        } else {
            assertTrue(r[1].get() <= r[0].get() + 1, what + ": GET requests: plain " + r[0] + ", sealed " + r[1]);
        }
    }
}
