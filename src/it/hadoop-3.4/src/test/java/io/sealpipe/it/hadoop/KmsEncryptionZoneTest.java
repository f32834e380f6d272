package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.JceAesCtrCryptoCodec;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileEncryptionInfo;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.client.CreateEncryptionZoneFlag;
import org.apache.hadoop.hdfs.client.HdfsAdmin;
import org.apache.hadoop.hdfs.client.HdfsClientConfigKeys;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An HDFS encryption zone whose keys are in Hadoop's KMS server: the NameNode and the DFS
 * clients all have {@code hadoop.security.key.provider.path=kms://http@127.0.0.1:PORT/kms}, the
 * zone's key is made in the KMS, and each file's data key is generated and decrypted by it. A
 * client whose only AES-CTR codec is sealpipe's writes files that a client with only Hadoop's
 * {@code JceAesCtrCryptoCodec} reads byte for byte, and the other way round; sealpipe's client
 * makes a sealpipe codec for each stream (Hadoop's log of the codec it uses) and the JCE client
 * none.
 */
class KmsEncryptionZoneTest {
    private static final String CODEC_CLASSES =
            CommonConfigurationKeysPublic.HADOOP_SECURITY_CRYPTO_CODEC_CLASSES_AES_CTR_NOPADDING_KEY;
    private static final String SEALPIPE_CODEC = SealpipeAesCtrCryptoCodec.class.getName();
    private static final String JCE_CODEC = JceAesCtrCryptoCodec.class.getName();
    private static final String ZONE = "/zone";
    private static final String KEY = "zonekey";
    private static final int[] SIZES = {0, 1, 17, 65_537, 1_000_003, 3 * 1024 * 1024 + 5};

    private static Kms kms;
    private static Configuration clusterConf;
    private static MiniDFSCluster cluster;
    private static DistributedFileSystem sealpipe;
    private static DistributedFileSystem jce;
    private static List<Logs.Line> loggedBySealpipeWrites;
    private static List<Logs.Line> loggedByJceWrites;

    @BeforeAll
    static void startKmsClusterAndWriteFiles() throws Exception {
        Logs.install();
        java.nio.file.Path base = java.nio.file.Path.of("target", "kms-encryption-zone").toAbsolutePath();
        TestFiles.deleteRecursively(base);
        Files.createDirectories(base);
        kms = Kms.start(Kms.dir("encryption-zone"));
        kms.createKey(KEY, 256);

        Configuration conf = MiniHdfs.conf(1024 * 1024);
        conf.set(CommonConfigurationKeysPublic.HADOOP_SECURITY_KEY_PROVIDER_PATH, kms.uri().toString());
        conf.set(CODEC_CLASSES, JCE_CODEC);
        clusterConf = conf;
        cluster = new MiniDFSCluster.Builder(conf, base.resolve("dfs").toFile()).numDataNodes(1).build();
        cluster.waitActive();
        cluster.getFileSystem().mkdirs(new Path(ZONE));
        new HdfsAdmin(cluster.getURI(), conf).createEncryptionZone(new Path(ZONE), KEY,
                EnumSet.of(CreateEncryptionZoneFlag.NO_TRASH));

        sealpipe = client(conf, SEALPIPE_CODEC);
        jce = client(conf, JCE_CODEC);
        int mark = Logs.mark();
        for (int size : SIZES) {
            write(sealpipe, file("sealpipe", size), plaintext(size));
        }
        loggedBySealpipeWrites = Logs.since(mark);
        mark = Logs.mark();
        for (int size : SIZES) {
            write(jce, file("jce", size), plaintext(size));
        }
        loggedByJceWrites = Logs.since(mark);
    }

    @AfterAll
    static void stop() throws IOException {
        try {
            for (FileSystem fs : new FileSystem[] {sealpipe, jce}) {
                if (fs != null) {
                    fs.close();
                }
            }
        } finally {
            try {
                if (cluster != null) {
                    cluster.shutdown();
                }
            } finally {
                if (kms != null) {
                    kms.stop();
                }
            }
        }
    }

    /** A DFS client whose only AES-CTR codec is {@code codec}, in a client context of its own. */
    private static DistributedFileSystem client(Configuration clusterConf, String codec) throws IOException {
        Configuration conf = new Configuration(clusterConf);
        conf.set(CODEC_CLASSES, codec);
        conf.set(HdfsClientConfigKeys.DFS_CLIENT_CONTEXT, "codec " + codec);
        return (DistributedFileSystem) FileSystem.newInstance(cluster.getURI(), conf);
    }

    private static Path file(String writer, int size) {
        return new Path(ZONE + "/" + writer + "-" + size);
    }

    private static byte[] plaintext(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    private static void write(FileSystem fs, Path path, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(path, false)) {
            int i = 0;
            Random random = new Random(data.length);
            while (i < data.length) {
                int n = Math.min(data.length - i, 1 + random.nextInt(70_000));
                out.write(data, i, n);
                i += n;
            }
        }
    }

    private static byte[] readAll(FileSystem fs, Path path) throws IOException {
        try (FSDataInputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {0, 1, 17, 65_537, 1_000_003, 3 * 1024 * 1024 + 5})
    void filesWrittenThroughTheZoneReadBackAndAcrossCodecs(int size) throws IOException {
        byte[] expected = plaintext(size);
        for (String writer : List.of("sealpipe", "jce")) {
            Path path = file(writer, size);
            FileEncryptionInfo info = sealpipe.getClient().getFileInfo(path.toUri().getPath()).getFileEncryptionInfo();
            assertNotNull(info, path + " is not in the encryption zone");
            assertEquals(KEY, info.getKeyName());
            assertArrayEquals(expected, readAll(sealpipe, path), writer + "'s file read by sealpipe's client");
            assertArrayEquals(expected, readAll(jce, path), writer + "'s file read by the JCE client");
            if (size > 0) {
                // What the DataNode stores is not the plaintext.
                byte[] raw = readAll(cluster.getFileSystem(), new Path("/.reserved/raw" + path));
                assertEquals(size, raw.length);
                assertFalse(java.util.Arrays.equals(expected, raw), "the stored bytes are the plaintext");
            }
            // A positioned read in the middle, on both codecs.
            if (size > 100) {
                byte[] piece = new byte[50];
                for (DistributedFileSystem reader : List.of(sealpipe, jce)) {
                    try (FSDataInputStream in = reader.open(path)) {
                        in.readFully(size / 2 + 3, piece);
                    }
                    assertArrayEquals(java.util.Arrays.copyOfRange(expected, size / 2 + 3, size / 2 + 53), piece);
                }
            }
        }
    }

    @org.junit.jupiter.api.Test
    void sealpipesClientMadeSealpipeCodecsAndTheJceClientNone() {
        assertEquals(SIZES.length, Logs.streamCodecsMade(loggedBySealpipeWrites, SEALPIPE_CODEC),
                () -> "sealpipe codecs made for sealpipe's client's streams: " + Logs.sealpipe(loggedBySealpipeWrites));
        assertTrue(Logs.engineChosen(loggedBySealpipeWrites), () -> "sealpipe chose no engine while its client wrote: "
                + Logs.sealpipe(loggedBySealpipeWrites));
        assertEquals(0, Logs.codecsMade(loggedByJceWrites, SEALPIPE_CODEC), "sealpipe codecs made while the JCE client wrote");
        assertEquals(SIZES.length, Logs.streamCodecsMade(loggedByJceWrites, JCE_CODEC), "JCE codecs made for the JCE client's streams");
    }

    /**
     * KMS requests, by the KMS's own meters, for {@code n} small files written by one client and read
     * back by a fresh one: in the encryption zone, and as sealed files in envelope mode
     * ({@code shdfs} over the same cluster, the same KMS and key). Written to
     * {@code target/kms/zone-vs-sealed-calls.txt} for the record (docs/PERFORMANCE.md). 100 files
     * here (1,000 take eight minutes on a mini cluster: -Dsealpipe.it.zone.files=1000 for the
     * record); the zone's count grows with them, the sealed files' does not.
     */
    @org.junit.jupiter.api.Test
    void filesCostTheZoneADecryptEachAndSealedFilesAFewRequests() throws Exception {
        int n = Integer.getInteger("sealpipe.it.zone.files", 100);
        byte[] data = plaintext(100);
        long[] zone = new long[4];
        long g = Kms.generateEekCalls();
        long d = Kms.decryptEekCalls();
        try (DistributedFileSystem writer = client(clusterConf, JCE_CODEC)) {
            writer.mkdirs(new Path(ZONE + "/calls"));
            for (int i = 0; i < n; i++) {
                write(writer, new Path(ZONE + "/calls/f" + i), data);
            }
        }
        zone[0] = Kms.generateEekCalls() - g;
        zone[1] = Kms.decryptEekCalls() - d;
        g = Kms.generateEekCalls();
        d = Kms.decryptEekCalls();
        try (DistributedFileSystem reader = client(clusterConf, JCE_CODEC)) {
            for (int i = 0; i < n; i++) {
                assertArrayEquals(data, readAll(reader, new Path(ZONE + "/calls/f" + i)));
            }
        }
        zone[2] = Kms.generateEekCalls() - g;
        zone[3] = Kms.decryptEekCalls() - d;

        Configuration sealedConf = new Configuration(clusterConf);
        sealedConf.set("fs.shdfs.impl", io.sealpipe.hadoop.SealedFileSystem.class.getName());
        sealedConf.setBoolean("fs.shdfs.impl.disable.cache", true);
        sealedConf.set(io.sealpipe.hadoop.SealedFileSystem.wrapsKey("shdfs"), "hdfs");
        sealedConf.set(io.sealpipe.hadoop.SealedFileSystem.KEY_PROVIDER_PATH, kms.uri().toString());
        sealedConf.set(io.sealpipe.hadoop.SealedFileSystem.KEY_NAME, KEY);
        sealedConf.set(io.sealpipe.hadoop.SealedFileSystem.KEY_MODE, "envelope");
        java.net.URI sealedUri = java.net.URI.create("shdfs://" + cluster.getURI().getAuthority() + "/");
        long[] sealed = new long[4];
        g = Kms.generateEekCalls();
        d = Kms.decryptEekCalls();
        try (FileSystem writer = FileSystem.get(sealedUri, sealedConf)) {
            for (int i = 0; i < n; i++) {
                write(writer, new Path(sealedUri.resolve("/sealed-calls/f" + i)), data);
            }
        }
        sealed[0] = Kms.generateEekCalls() - g;
        sealed[1] = Kms.decryptEekCalls() - d;
        g = Kms.generateEekCalls();
        d = Kms.decryptEekCalls();
        try (FileSystem reader = FileSystem.get(sealedUri, sealedConf)) {
            for (int i = 0; i < n; i++) {
                assertArrayEquals(data, readAll(reader, new Path(sealedUri.resolve("/sealed-calls/f" + i))));
            }
        }
        sealed[2] = Kms.generateEekCalls() - g;
        sealed[3] = Kms.decryptEekCalls() - d;
        String report = String.format("%d files of 100 bytes, KMS requests by its own meters (GENERATE_EEK, DECRYPT_EEK)%n"
                + "encryption zone: write %d, %d; read by a fresh client %d, %d%n"
                + "sealed files, envelope mode: write %d, %d; read by a fresh client %d, %d%n", n, zone[0], zone[1], zone[2],
                zone[3], sealed[0], sealed[1], sealed[2], sealed[3]);
        java.nio.file.Path record = java.nio.file.Path.of("target", "kms", "zone-vs-sealed-calls.txt");
        Files.createDirectories(record.getParent());
        Files.writeString(record, report);
        // The zone: a DECRYPT_EEK per file written and per file opened (the positive control of the meter).
        assertTrue(zone[1] >= n && zone[3] >= n, report);
        // Sealed files: one data key (a GENERATE_EEK, its DECRYPT_EEK), one unwrap to read.
        assertEquals(1, sealed[0], report);
        assertEquals(1, sealed[1], report);
        assertEquals(0, sealed[2], report);
        assertEquals(1, sealed[3], report);
    }
}
