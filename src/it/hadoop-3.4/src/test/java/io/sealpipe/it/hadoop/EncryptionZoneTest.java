package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.CipherSuite;
import org.apache.hadoop.crypto.JceAesCtrCryptoCodec;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension.EncryptedKeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileEncryptionInfo;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.UnknownCipherSuiteException;
import org.apache.hadoop.hdfs.client.CreateEncryptionZoneFlag;
import org.apache.hadoop.hdfs.client.HdfsAdmin;
import org.apache.hadoop.hdfs.client.HdfsClientConfigKeys;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * HDFS transparent encryption on sealpipe's codec: a MiniDFSCluster (one DataNode) with a
 * key provider in a local JCEKS file, two encryption zones (AES-128 and AES-256 keys), and three
 * DFS clients that differ only in {@code hadoop.security.crypto.codec.classes.aes.ctr.nopadding}:
 * sealpipe's codec alone, Hadoop's {@code JceAesCtrCryptoCodec} alone, and a class that does not
 * exist. Files written by each of the first two read back through the other, whole, by seeks and
 * positioned reads (byte arrays and buffers); what the DataNode stores, read through {@code
 * /.reserved/raw}, is ciphertext that sealpipe's own {@link CtrStreams} decrypts with the file's
 * data key and IV; appends by one codec continue the key stream of the other.
 *
 * <p>The NameNode runs on the JCE codec only: with a local key provider it makes the files' data
 * keys with {@code CryptoCodec} itself, and sealpipe must be seen in the clients only.
 */
class EncryptionZoneTest {
    private static final String CODEC_CLASSES =
            CommonConfigurationKeysPublic.HADOOP_SECURITY_CRYPTO_CODEC_CLASSES_AES_CTR_NOPADDING_KEY;
    private static final String SEALPIPE_CODEC = SealpipeAesCtrCryptoCodec.class.getName();
    private static final String MISSING_CODEC = "io.sealpipe.hadoop.NoSuchCodec";
    /** Sizes not multiples of 16 but for 0; the largest spans four 1 MiB blocks. */
    private static final int[] SIZES = {0, 1, 15, 17, 4095, 65_537, 1_000_003, 3 * 1024 * 1024 + 5};
    /** Files at least this long also get {@link #RANDOM_READS} seeks and positioned reads. */
    private static final int RANDOM_READS_FROM = 4095;
    private static final int RANDOM_READS = 200;
    private static final int BLOCK_SIZE = 1024 * 1024;
    private static final int FILES_PER_WRITER = 2 * SIZES.length;

    /** The encryption zones, one per key length. */
    enum Zone {
        AES_128("/zone128", "key128", 128),
        AES_256("/zone256", "key256", 256);

        final String dir;
        final String key;
        final int bits;

        Zone(String dir, String key, int bits) {
            this.dir = dir;
            this.key = key;
            this.bits = bits;
        }

        org.apache.hadoop.fs.Path file(Client writer, int size) {
            return new org.apache.hadoop.fs.Path(dir + "/" + writer.name().toLowerCase() + "-" + size);
        }
    }

    /** A DFS client with only this codec for AES/CTR/NoPadding. */
    enum Client {
        SEALPIPE(SEALPIPE_CODEC),
        JCE(JceAesCtrCryptoCodec.class.getName());

        final String codec;

        Client(String codec) {
            this.codec = codec;
        }
    }

    private static MiniDFSCluster cluster;
    private static Configuration clusterConf;
    private static final Map<Client, DistributedFileSystem> CLIENTS = new EnumMap<>(Client.class);
    /** Decrypts the files' data keys, on the JCE codec: independent of the codec under test. */
    private static KeyProviderCryptoExtension keys;
    /** What was logged while the cluster and zones were made, while the JCE client wrote, while sealpipe's wrote. */
    private static List<Logs.Line> loggedForZones;
    private static final Map<Client, List<Logs.Line>> LOGGED_FOR_WRITES = new EnumMap<>(Client.class);

    @BeforeAll
    static void startClusterAndWriteFiles() throws Exception {
        Logs.install();
        Path base = Path.of("target", "encryption-zone").toAbsolutePath();
        TestFiles.deleteRecursively(base);
        Files.createDirectories(base);

        clusterConf = MiniHdfs.conf(BLOCK_SIZE);
        clusterConf.set(CommonConfigurationKeysPublic.HADOOP_SECURITY_KEY_PROVIDER_PATH,
                "jceks://file@" + base.resolve("kms.jceks"));
        clusterConf.set(CODEC_CLASSES, Client.JCE.codec);

        // The keys exist before the NameNode opens the key store: it reads the file once.
        KeyProvider provider = KeyProviderFactory.get(URI.create(
                clusterConf.get(CommonConfigurationKeysPublic.HADOOP_SECURITY_KEY_PROVIDER_PATH)), clusterConf);
        for (Zone zone : Zone.values()) {
            KeyProvider.Options options = KeyProvider.options(clusterConf);
            options.setCipher(CipherSuite.AES_CTR_NOPADDING.getName());
            options.setBitLength(zone.bits);
            provider.createKey(zone.key, options);
        }
        provider.flush();
        keys = KeyProviderCryptoExtension.createKeyProviderCryptoExtension(provider);

        cluster = new MiniDFSCluster.Builder(clusterConf, base.resolve("dfs").toFile()).numDataNodes(1).build();
        cluster.waitActive();
        HdfsAdmin admin = new HdfsAdmin(cluster.getURI(), clusterConf);
        for (Zone zone : Zone.values()) {
            org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path(zone.dir);
            cluster.getFileSystem().mkdirs(dir);
            admin.createEncryptionZone(dir, zone.key, EnumSet.of(CreateEncryptionZoneFlag.NO_TRASH));
        }
        for (Client client : Client.values()) {
            CLIENTS.put(client, (DistributedFileSystem) FileSystem.newInstance(cluster.getURI(), clientConf(client.codec)));
        }
        loggedForZones = Logs.since(0);

        for (Client writer : List.of(Client.JCE, Client.SEALPIPE)) {
            int mark = Logs.mark();
            for (Zone zone : Zone.values()) {
                for (int size : SIZES) {
                    write(CLIENTS.get(writer), zone.file(writer, size), plaintext(size), false);
                }
            }
            LOGGED_FOR_WRITES.put(writer, Logs.since(mark));
        }
    }

    @AfterAll
    static void stopCluster() throws IOException {
        // Every client closed and the cluster shut down even when a close fails; the first
        // failure is thrown, the others suppressed.
        IOException failure = null;
        try {
            for (DistributedFileSystem fs : CLIENTS.values()) {
                try {
                    fs.close();
                } catch (IOException | RuntimeException e) {
                    if (failure == null) {
                        failure = e instanceof IOException io ? io : new IOException(e);
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
        } finally {
            if (cluster != null) {
                cluster.shutdown();
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * The cluster's configuration with only {@code codec} for AES-CTR. Each client has a client
     * context of its own: DFS clients of one context share a key provider (made from the first
     * client's configuration), which decrypts the files' data keys with its own codec.
     */
    private static Configuration clientConf(String codec) {
        Configuration conf = new Configuration(clusterConf);
        conf.set(CODEC_CLASSES, codec);
        conf.set(HdfsClientConfigKeys.DFS_CLIENT_CONTEXT, "codec " + codec);
        return conf;
    }

    static byte[] plaintext(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    /** Writes {@code data} in pieces: single bytes first, then pieces of random odd lengths. */
    private static void write(FileSystem fs, org.apache.hadoop.fs.Path file, byte[] data, boolean append)
            throws IOException {
        Random random = new Random(data.length * 31L + file.hashCode());
        try (FSDataOutputStream out = append ? fs.append(file) : fs.create(file, false)) {
            int i = 0;
            while (i < data.length) {
                int n = i < 33 ? 1 : Math.min(data.length - i, 1 + 2 * random.nextInt(50_000));
                out.write(data, i, n);
                i += n;
            }
        }
    }

    private static byte[] readAll(FileSystem fs, org.apache.hadoop.fs.Path file) throws IOException {
        try (FSDataInputStream in = fs.open(file)) {
            return in.readAllBytes();
        }
    }

    static Stream<Arguments> writerReaderFile() {
        List<Arguments> all = new ArrayList<>();
        for (Zone zone : Zone.values()) {
            for (Client writer : Client.values()) {
                for (Client reader : Client.values()) {
                    for (int size : SIZES) {
                        all.add(Arguments.of(zone, writer, reader, size));
                    }
                }
            }
        }
        return all.stream();
    }

    static Stream<Arguments> writerFile() {
        List<Arguments> all = new ArrayList<>();
        for (Zone zone : Zone.values()) {
            for (Client writer : Client.values()) {
                for (int size : SIZES) {
                    all.add(Arguments.of(zone, writer, size));
                }
            }
        }
        return all.stream();
    }

    /**
     * Hadoop made a sealpipe codec for the crypto stream of every file the sealpipe client wrote,
     * and sealpipe chose its engine then (the one Surefire forces, if it does), not before: not
     * while the cluster started and the zones were made, nor while the JCE client wrote (which
     * made a JCE codec for the stream of every file). Only the streams' codecs count: the client
     * also makes a codec to decrypt each file's data key (its key provider's, {@code
     * CryptoCodec.getInstance} in {@code KeyProviderCryptoExtension}), and the NameNode one to
     * make it, which alone would make as many codec lines as files.
     */
    @Test
    void hadoopMadeSealpipesCodecInItsClientOnly() {
        assertEquals(0, Logs.codecsMade(loggedForZones, SEALPIPE_CODEC), "sealpipe codecs made for the zones");
        assertEquals(List.of(), Logs.sealpipe(loggedForZones), "sealpipe logged while the zones were made");

        List<Logs.Line> jce = LOGGED_FOR_WRITES.get(Client.JCE);
        assertEquals(0, Logs.codecsMade(jce, SEALPIPE_CODEC), "sealpipe codecs made while the JCE client wrote");
        assertEquals(List.of(), Logs.sealpipe(jce), "sealpipe logged while the JCE client wrote");
        // One create per file, each wrapped in a CryptoOutputStream on a codec of its own.
        assertEquals(FILES_PER_WRITER, Logs.streamCodecsMade(jce, Client.JCE.codec),
                "JCE codecs made for the streams of the JCE client's files");

        List<Logs.Line> sealpipe = LOGGED_FOR_WRITES.get(Client.SEALPIPE);
        assertEquals(FILES_PER_WRITER, Logs.streamCodecsMade(sealpipe, SEALPIPE_CODEC),
                "sealpipe codecs made for the streams of the sealpipe client's files");
        String forced = System.getProperty("sealpipe.engine");
        String engineLine = Logs.ENGINE_LINE + (forced == null ? "" : forced + ":");
        assertTrue(Logs.sealpipe(sealpipe).stream().anyMatch(m -> m.startsWith(engineLine)),
                () -> "no '" + engineLine + "' while the client with only sealpipe's codec wrote: " + Logs.sealpipe(sealpipe));
    }

    @ParameterizedTest(name = "{0}: written by {1}, read by {2}, {3} bytes")
    @MethodSource("writerReaderFile")
    void readsWhatTheOtherCodecWrote(Zone zone, Client writer, Client reader, int size) throws IOException {
        DistributedFileSystem fs = CLIENTS.get(reader);
        org.apache.hadoop.fs.Path file = zone.file(writer, size);
        byte[] plain = plaintext(size);
        assertEquals(size, fs.getFileStatus(file).getLen());
        assertArrayEquals(plain, readAll(fs, file));
        if (size >= RANDOM_READS_FROM) {
            randomReads(fs, file, plain, new Random(size * 4L + writer.ordinal() * 2L + reader.ordinal()));
        }
    }

    /**
     * Seeks and sequential reads, positioned reads (which leave the position alone), into byte
     * arrays at an offset and into heap and direct buffers, at random places and lengths.
     */
    private static void randomReads(FileSystem fs, org.apache.hadoop.fs.Path file, byte[] plain, Random random)
            throws IOException {
        int size = plain.length;
        try (FSDataInputStream in = fs.open(file)) {
            assertTrue(in.hasCapability(StreamCapabilities.READBYTEBUFFER), "read(ByteBuffer) through the crypto stream");
            assertTrue(in.hasCapability(StreamCapabilities.PREADBYTEBUFFER), "readFully(long, ByteBuffer) through the crypto stream");
            long position = 0;
            for (int i = 0; i < RANDOM_READS; i++) {
                int at = random.nextInt(size + 1);
                int length = random.nextInt(Math.min(size - at, 70_000) + 1);
                int kind = random.nextInt(5);
                String where = "read " + i + " (kind " + kind + "): " + length + " bytes at " + at + " of " + size;
                switch (kind) {
                    case 0 -> { // seek, then read into an array at an offset
                        in.seek(at);
                        byte[] b = new byte[length + 3];
                        in.readFully(b, 3, length);
                        assertArrayEquals(Arrays.copyOfRange(plain, at, at + length), Arrays.copyOfRange(b, 3, b.length), where);
                        position = at + length;
                    }
                    case 1 -> { // positioned readFully
                        byte[] b = new byte[length];
                        in.readFully(at, b, 0, length);
                        assertArrayEquals(Arrays.copyOfRange(plain, at, at + length), b, where);
                    }
                    case 2 -> { // positioned read: some bytes, at least one unless at the end
                        byte[] b = new byte[length];
                        int n = in.read(at, b, 0, length);
                        if (length > 0 && at < size) {
                            assertTrue(n > 0 && n <= length, where + ": read " + n);
                        } else {
                            assertTrue(n <= 0, where + ": read " + n);
                        }
                        n = Math.max(n, 0);
                        assertArrayEquals(Arrays.copyOfRange(plain, at, at + n), Arrays.copyOf(b, n), where);
                    }
                    case 3 -> { // seek, then read into a heap or direct buffer
                        in.seek(at);
                        ByteBuffer buffer = random.nextBoolean() ? ByteBuffer.allocateDirect(length) : ByteBuffer.allocate(length);
                        while (buffer.hasRemaining()) {
                            if (in.read(buffer) < 0) {
                                fail(where + ": the end after " + buffer.position());
                            }
                        }
                        assertBuffer(plain, at, buffer, where);
                        position = at + length;
                    }
                    default -> { // positioned readFully into a heap or direct buffer
                        ByteBuffer buffer = random.nextBoolean() ? ByteBuffer.allocateDirect(length) : ByteBuffer.allocate(length);
                        in.readFully(at, buffer);
                        assertBuffer(plain, at, buffer, where);
                    }
                }
                assertEquals(position, in.getPos(), where + ": the stream's position");
            }
        }
    }

    private static void assertBuffer(byte[] plain, int at, ByteBuffer buffer, String where) {
        buffer.flip();
        byte[] b = new byte[buffer.remaining()];
        buffer.get(b);
        assertArrayEquals(Arrays.copyOfRange(plain, at, at + b.length), b, where);
    }

    /**
     * What the DataNode holds is the AES-CTR ciphertext of the plaintext under the file's data key
     * (decrypted from its encrypted data key with the zone's key) and IV: exactly what sealpipe's
     * {@link CtrStreams} decrypts, whole and at random positions, reading the raw file by position.
     */
    @ParameterizedTest(name = "{0}: written by {1}, {2} bytes")
    @MethodSource("writerFile")
    void storesTheCtrCiphertextThatCtrStreamsDecrypts(Zone zone, Client writer, int size) throws Exception {
        DistributedFileSystem fs = CLIENTS.get(Client.JCE);
        org.apache.hadoop.fs.Path file = zone.file(writer, size);
        org.apache.hadoop.fs.Path raw = new org.apache.hadoop.fs.Path("/.reserved/raw" + file.toUri().getPath());
        byte[] plain = plaintext(size);
        byte[] stored = readAll(fs, raw);
        assertEquals(size, stored.length, "CTR: the ciphertext is as long as the plaintext");
        if (size >= 16) {
            assertFalse(Arrays.equals(plain, stored), "the DataNode holds the plaintext");
        }

        FileEncryptionInfo info = fs.getClient().getFileInfo(file.toUri().getPath()).getFileEncryptionInfo();
        assertEquals(CipherSuite.AES_CTR_NOPADDING, info.getCipherSuite());
        assertEquals(zone.key, info.getKeyName());
        byte[] dataKey = keys.decryptEncryptedKey(EncryptedKeyVersion.createForDecryption(info.getKeyName(),
                info.getEzKeyVersionName(), info.getIV(), info.getEncryptedDataEncryptionKey())).getMaterial();
        assertEquals(zone.bits / 8, dataKey.length, "the data key is as long as the zone's key");
        CtrStreams ctr = CtrStreams.builder().key(dataKey).iv(info.getIV()).build();
        Arrays.fill(dataKey, (byte) 0);
        try (FSDataInputStream rawIn = fs.open(raw); var in = ctr.decrypt(rawIn::read)) {
            assertArrayEquals(plain, in.readAllBytes(), "CtrStreams over the raw file");
            Random random = new Random(size);
            for (int i = 0; i < 20 && size > 0; i++) {
                int at = random.nextInt(size);
                byte[] b = new byte[random.nextInt(Math.min(size - at, 20_000) + 1)];
                in.readFully(at, b, 0, b.length);
                assertArrayEquals(Arrays.copyOfRange(plain, at, at + b.length), b, b.length + " bytes at " + at);
            }
        } finally {
            ctr.destroy();
        }
    }

    /**
     * An append by one codec continues, at a position that is not a multiple of 16, the key
     * stream the other codec began; both clients read the whole file.
     */
    @ParameterizedTest(name = "written by {0}, appended to by {1}, then by {0}")
    @MethodSource("appendOrders")
    void appendsContinueTheOtherCodecsKeyStream(Client first, Client second) throws IOException {
        byte[] plain = plaintext(300_007);
        int cut1 = 100_003;
        int cut2 = 200_011;
        org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(
                Zone.AES_256.dir + "/append-" + first.name().toLowerCase() + "-" + second.name().toLowerCase());
        write(CLIENTS.get(first), file, Arrays.copyOfRange(plain, 0, cut1), false);
        write(CLIENTS.get(second), file, Arrays.copyOfRange(plain, cut1, cut2), true);
        write(CLIENTS.get(first), file, Arrays.copyOfRange(plain, cut2, plain.length), true);
        for (Client reader : Client.values()) {
            assertArrayEquals(plain, readAll(CLIENTS.get(reader), file), "read by " + reader);
        }
    }

    static Stream<Arguments> appendOrders() {
        return Stream.of(Arguments.of(Client.JCE, Client.SEALPIPE), Arguments.of(Client.SEALPIPE, Client.JCE));
    }

    /**
     * A client whose only codec class does not load writes nothing into a zone and reads nothing
     * from it: Hadoop does not fall back to another codec (or to plaintext) when a list is set.
     */
    @Test
    void aClientWithNoCodecThatLoadsNeitherWritesNorReads() throws IOException {
        org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(Zone.AES_128.dir + "/no-codec");
        org.apache.hadoop.fs.Path existing = Zone.AES_128.file(Client.SEALPIPE, 4095);
        int mark = Logs.mark();
        try (FileSystem fs = FileSystem.newInstance(cluster.getURI(), clientConf(MISSING_CODEC))) {
            IOException write = assertThrows(IOException.class, () -> write(fs, file, plaintext(4095), false));
            assertNoCodec(write);
            IOException read = assertThrows(IOException.class, () -> readAll(fs, existing));
            assertNoCodec(read);
            if (fs.exists(file)) {
                assertEquals(0, fs.getFileStatus(file).getLen(), "bytes written without a codec");
            }
        }
        assertTrue(Logs.codecMissing(Logs.since(mark), MISSING_CODEC), "Hadoop did not say the codec class is missing");
    }

    private static void assertNoCodec(IOException e) {
        assertInstanceOf(UnknownCipherSuiteException.class, e, () -> "not the missing codec: " + e);
        assertTrue(e.getMessage().contains(CommonConfigurationKeysPublic.HADOOP_SECURITY_CRYPTO_CODEC_CLASSES_KEY_PREFIX),
                e::getMessage);
    }
}
