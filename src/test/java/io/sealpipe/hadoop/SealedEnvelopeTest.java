package io.sealpipe.hadoop;

import static io.sealpipe.hadoop.SealedFixture.data;
import static io.sealpipe.hadoop.SealedFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.Envelope;
import io.sealpipe.internal.hadoop.EnvelopeKeys;
import io.sealpipe.internal.hadoop.SealedKeys;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProvider.KeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension;
import org.apache.hadoop.crypto.key.KeyProviderCryptoExtension.EncryptedKeyVersion;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Envelope mode ({@code sealpipe.fs.key.mode=envelope}) over a JCEKS keystore through Hadoop's
 * default {@code KeyProviderCryptoExtension}: files sealed under data keys the provider wraps,
 * the envelope's format and its authentication, the bounds of the data-key caches counted in
 * provider calls, both kinds of file read by either mode, and bad envelopes and provider answers
 * failing with the path and the key, with no byte of data.
 */
class SealedEnvelopeTest {
    private static final int CHUNK = 16 * 1024;

    @TempDir
    java.nio.file.Path tmp;

    private SealedFixture fixture;
    private Configuration conf;
    private final List<FileSystem> opened = new ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        fixture = new SealedFixture(tmp);
        conf = new Configuration(fixture.conf);
        conf.set(SealedFileSystem.KEY_MODE, "envelope");
    }

    @AfterEach
    void closeAll() throws IOException {
        for (FileSystem fs : opened) {
            fs.close();
        }
    }

    private SealedFileSystem fs(Configuration c) throws IOException {
        FileSystem fs = FileSystem.get(java.net.URI.create("sfile:///"), c);
        opened.add(fs);
        return (SealedFileSystem) fs;
    }

    private byte[] stored(String name) throws IOException {
        return Files.readAllBytes(tmp.resolve(name));
    }

    private void store(String name, byte[] bytes) throws IOException {
        Files.write(tmp.resolve(name), bytes);
        Files.deleteIfExists(tmp.resolve("." + name + ".crc"));
    }

    private static byte[] readAll(FileSystem fs, Path path) throws IOException {
        try (InputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    @Test
    void envelopeFilesRoundTripWithTheirLengthFromTheStoredLength() throws Exception {
        SealedFileSystem fs = fs(conf);
        int[] sizes = {0, 1, CHUNK - 1, CHUNK, 3 * CHUNK + 77};
        for (int size : sizes) {
            Path path = fixture.sealedPath("f" + size);
            byte[] data = data(size, size);
            write(fs, path, data);
            byte[] stored = stored("f" + size);
            assertEquals(Envelope.LENGTH + GcmStreams.ciphertextLength(size), stored.length, "512 bytes more than direct");
            assertTrue(Envelope.startsWithMagic(stored));
            assertEquals(size, fs.getFileStatus(path).getLen());
            assertArrayEquals(data, readAll(fs, path));
            if (size > 10) {
                try (FSDataInputStream in = fs.open(path)) {
                    byte[] part = new byte[10];
                    in.readFully(size - 10, part);
                    assertArrayEquals(Arrays.copyOfRange(data, size - 10, size), part, "positioned read at the end");
                    List<FileRange> ranges = List.of(FileRange.createFileRange(1, 5), FileRange.createFileRange(size - 3, 3));
                    in.readVectored(ranges, ByteBuffer::allocate);
                    ByteBuffer first = ranges.get(0).getData().get();
                    assertEquals(data[1], first.get(first.position()), "vectored read, shifted by the envelope");
                }
            }
        }
        for (FileStatus status : fs.listStatus(fixture.sealedPath(""))) {
            String name = status.getPath().getName();
            if (name.startsWith("f")) {
                assertEquals(Long.parseLong(name.substring(1)), status.getLen(), "listed length of " + name);
            }
        }
    }

    /**
     * What FORMAT.md promises an independent reader: with the data key unwrapped, the message
     * after the 512 envelope bytes opens with those bytes as its context, and only then.
     */
    @Test
    void anIndependentReaderOpensTheMessageWithTheDataKeyAndTheEnvelopeAsContext() throws Exception {
        SealedFileSystem fs = fs(conf);
        byte[] data = data(2 * CHUNK + 5, 9);
        write(fs, fixture.sealedPath("a"), data);
        byte[] stored = stored("a");
        Envelope envelope = Envelope.parse(stored);
        assertEquals(SealedFixture.KEY, envelope.keyName());
        assertEquals(SealedFixture.KEY + "@0", envelope.versionName());
        assertFalse(envelope.compressed());
        byte[] dataKey;
        KeyProviderCryptoExtension kms = KeyProviderCryptoExtension.createKeyProviderCryptoExtension(fixture.provider());
        try {
            dataKey = kms.decryptEncryptedKey(EncryptedKeyVersion.createForDecryption(envelope.keyName(),
                    envelope.versionName(), envelope.iv(), envelope.wrappedKey())).getMaterial();
        } finally {
            kms.close();
        }
        assertEquals(32, dataKey.length);
        int nameLength = (stored[12] & 0xff) << 8 | stored[13] & 0xff;
        byte[] context = Arrays.copyOf(stored, 14 + nameLength); // FORMAT.md: the envelope through the key name
        byte[] message = Arrays.copyOfRange(stored, Envelope.LENGTH, stored.length);
        try (InputStream in = GcmStreams.builder().key(dataKey).context(context).build()
                .decrypt(new java.io.ByteArrayInputStream(message))) {
            assertArrayEquals(data, in.readAllBytes());
        }
        assertFalse(GcmStreams.builder().key(dataKey).build().matchesHeader(message), "no context: no match");
        assertFalse(GcmStreams.builder().key(dataKey).context(Arrays.copyOf(stored, Envelope.LENGTH)).build()
                .matchesHeader(message), "the whole envelope is not the context");
    }

    private static final int FILES = 1000;

    @Test
    void oneDataKeySealsManyFilesAndItsOwnFilesCostNoUnwrap() throws Exception {
        // Hadoop's raw local file system under it: 1,000 files without checksum files, several times faster.
        conf.set("fs.file.impl", org.apache.hadoop.fs.RawLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        SealedFileSystem writer = fs(conf);
        for (int i = 0; i < FILES; i++) {
            write(writer, fixture.sealedPath("m" + i), data(100 + i % 50, i));
        }
        for (int i = 0; i < FILES; i++) {
            assertArrayEquals(data(100 + i % 50, i), readAll(writer, fixture.sealedPath("m" + i)));
        }
        assertEquals(2, writer.envelopeKeys().calls(), "one generate and one unwrap for 1,000 files written and read");
        Set<String> salts = new HashSet<>();
        for (int i = 0; i < FILES; i++) {
            byte[] stored = stored("m" + i);
            assertArrayEquals(Arrays.copyOf(stored("m0"), Envelope.LENGTH), Arrays.copyOf(stored, Envelope.LENGTH),
                    "one envelope");
            salts.add(Arrays.toString(Arrays.copyOfRange(stored, Envelope.LENGTH, Envelope.LENGTH + 24)));
        }
        assertEquals(FILES, salts.size(), "each file's own salt, so its own key");

        SealedFileSystem reader = fs(new Configuration(conf)); // another JVM's: unwraps once
        for (int i = 0; i < FILES; i++) {
            assertArrayEquals(data(100 + i % 50, i), readAll(reader, fixture.sealedPath("m" + i)));
        }
        assertEquals(1, reader.envelopeKeys().calls(), "one unwrap for 1,000 files of one data key");
        assertEquals(1, reader.envelopeKeys().keptForReading());
    }

    @Test
    void boundsOfZeroGiveADataKeyPerFileAndAnUnwrapPerOpen() throws Exception {
        Configuration perFile = new Configuration(conf);
        perFile.setLong(SealedFileSystem.DATA_KEY_WRITE_FILES, 0);
        SealedFileSystem writer = fs(perFile);
        for (int i = 0; i < 4; i++) {
            write(writer, fixture.sealedPath("p" + i), data(10, i));
        }
        assertEquals(8, writer.envelopeKeys().calls(), "a generate and an unwrap per file");
        assertNotEquals(Arrays.toString(Arrays.copyOf(stored("p0"), Envelope.LENGTH)),
                Arrays.toString(Arrays.copyOf(stored("p1"), Envelope.LENGTH)));

        Configuration noKeeping = new Configuration(conf);
        noKeeping.setInt(SealedFileSystem.DATA_KEY_READ_KEYS, 0);
        SealedFileSystem reader = fs(noKeeping);
        for (int round = 0; round < 2; round++) {
            assertArrayEquals(data(10, 0), readAll(reader, fixture.sealedPath("p0")));
        }
        assertEquals(2, reader.envelopeKeys().calls(), "an unwrap per open");
        assertEquals(0, reader.envelopeKeys().keptForReading());
    }

    @Test
    void aDataKeySealsAtMostTheFilesItsBoundAllows() throws Exception {
        Configuration three = new Configuration(conf);
        three.setLong(SealedFileSystem.DATA_KEY_WRITE_FILES, 3);
        SealedFileSystem writer = fs(three);
        Set<String> envelopes = new HashSet<>();
        for (int i = 0; i < 10; i++) {
            write(writer, fixture.sealedPath("b" + i), data(10, i));
            envelopes.add(Arrays.toString(Arrays.copyOf(stored("b" + i), Envelope.LENGTH)));
        }
        assertEquals(4, envelopes.size(), "10 files, 3 per data key");
        assertEquals(8, writer.envelopeKeys().calls());
    }

    /** The time bounds, on a clock of the test's: a data key writes, and is kept for reading, for its seconds only. */
    @Test
    void dataKeysExpireAfterTheirSecondsAndAreDroppedZeroed() throws Exception {
        AtomicLong clock = new AtomicLong();
        Configuration timed = new Configuration(conf);
        timed.setLong(SealedFileSystem.DATA_KEY_WRITE_SECONDS, 10);
        timed.setLong(SealedFileSystem.DATA_KEY_READ_SECONDS, 20);
        AtomicInteger generated = new AtomicInteger();
        AtomicInteger unwrapped = new AtomicInteger();
        EnvelopeKeys keys = load(timed, () -> counting(generated, unwrapped), clock::get);
        try {
            EnvelopeKeys.Sealing first = keys.forWriting(false);
            first.streams().destroy();
            clock.addAndGet(9_999_999_999L);
            EnvelopeKeys.Sealing same = keys.forWriting(false);
            same.streams().destroy();
            assertEquals(1, generated.get(), "within 10 s: the same data key");
            assertArrayEquals(first.envelope().bytes(), same.envelope().bytes());
            clock.addAndGet(1);
            EnvelopeKeys.Sealing next = keys.forWriting(false);
            next.streams().destroy();
            assertEquals(2, generated.get(), "after 10 s: a new one");

            Path p = new Path("sfile:///x");
            keys.forReading(first.envelope(), p).destroy();
            assertEquals(2, unwrapped.get(), "kept since it was generated (at 0 s, 10 s later now)");
            clock.addAndGet(10_000_000_000L); // 20 s after the first was unwrapped
            keys.forReading(first.envelope(), p).destroy();
            assertEquals(3, unwrapped.get(), "its 20 s were up: unwrapped again");
            assertEquals(2, keys.keptForReading());
        } finally {
            keys.close();
        }
        assertThrows(IOException.class, () -> keys.forWriting(false), "closed");
    }

    private KeyProviderCryptoExtension counting(AtomicInteger generated, AtomicInteger unwrapped) throws IOException {
        KeyProviderCryptoExtension real = KeyProviderCryptoExtension.createKeyProviderCryptoExtension(fixture.provider());
        return ForwardingExtension.of(real, new ForwardingExtension.Calls(real) {
            @Override
            public EncryptedKeyVersion generateEncryptedKey(String name) throws IOException, GeneralSecurityException {
                generated.incrementAndGet();
                return super.generateEncryptedKey(name);
            }

            @Override
            public KeyVersion decryptEncryptedKey(EncryptedKeyVersion eek) throws IOException, GeneralSecurityException {
                unwrapped.incrementAndGet();
                return super.decryptEncryptedKey(eek);
            }
        });
    }

    /**
     * Each mode opens its own kind; the other only with sealpipe.fs.key.mode.read.other, refused
     * before any key is asked for otherwise (envelope mode must not fetch the key's material for
     * a stray file, and listings give the other kind wrong lengths).
     */
    @Test
    void eachModeOpensTheOtherKindOnlyWhenAskedTo() throws Exception {
        SealedFileSystem direct = fs(new Configuration(fixture.conf));
        SealedFileSystem envelope = fs(conf);
        byte[] a = data(CHUNK + 3, 1);
        byte[] b = data(CHUNK + 4, 2);
        write(direct, fixture.sealedPath("direct"), a);
        write(envelope, fixture.sealedPath("envelope"), b);
        assertFalse(Envelope.startsWithMagic(stored("direct")));
        IOException refused = assertThrows(SealedKeys.NoVersionMatches.class,
                () -> readAll(envelope, fixture.sealedPath("direct")));
        assertTrue(refused.getMessage().contains(SealedFileSystem.KEY_MODE_READ_OTHER), refused.getMessage());
        assertEquals(0, envelope.envelopeKeys().calls() - 2, "no KMS call for it (the 2 are the write's)");
        refused = assertThrows(SealedKeys.NoVersionMatches.class, () -> readAll(direct, fixture.sealedPath("envelope")));
        assertTrue(refused.getMessage().contains("envelope file"), refused.getMessage());

        Configuration bothDirect = new Configuration(fixture.conf);
        bothDirect.setBoolean(SealedFileSystem.KEY_MODE_READ_OTHER, true);
        Configuration bothEnvelope = new Configuration(conf);
        bothEnvelope.setBoolean(SealedFileSystem.KEY_MODE_READ_OTHER, true);
        SealedFileSystem directBoth = fs(bothDirect);
        SealedFileSystem envelopeBoth = fs(bothEnvelope);
        assertArrayEquals(a, readAll(envelopeBoth, fixture.sealedPath("direct")));
        assertArrayEquals(b, readAll(directBoth, fixture.sealedPath("envelope")));
        assertEquals(a.length, direct.getFileStatus(fixture.sealedPath("direct")).getLen());
        assertEquals(b.length, envelope.getFileStatus(fixture.sealedPath("envelope")).getLen());
    }

    @Test
    void compressedEnvelopeFilesSayItInTheirEnvelope() throws Exception {
        Configuration snappy = new Configuration(conf);
        snappy.set(SealedFileSystem.COMPRESS, "snappy");
        SealedFileSystem fs = fs(snappy);
        byte[] text = "sealed and compressed ".repeat(5000).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        write(fs, fixture.sealedPath("z"), text);
        assertTrue(Envelope.parse(stored("z")).compressed());
        assertTrue(stored("z").length < text.length / 4, "compressed");
        assertEquals(text.length, fs.getFileStatus(fixture.sealedPath("z")).getLen());
        assertArrayEquals(text, readAll(fs, fixture.sealedPath("z")));
        // The content byte is authenticated: flipped, the file fails like a wrong key.
        byte[] stored = stored("z");
        stored[10] = Envelope.CONTENT_PLAIN;
        store("z", stored);
        IOException e = assertThrows(IOException.class, () -> readAll(fs, fixture.sealedPath("z")));
        assertTrue(e.getMessage().contains("does not match the file's key commitment"), e.getMessage());
    }

    /** Every field of the envelope is bound to the message: a changed byte anywhere in it fails at open. */
    @Test
    void aChangedSwappedOrCutEnvelopeFailsAtOpenNamingThePathAndTheKey() throws Exception {
        SealedFileSystem fs = fs(conf);
        byte[] data = data(CHUNK * 2, 3);
        write(fs, fixture.sealedPath("t"), data);
        byte[] good = stored("t");
        Envelope parsed = Envelope.parse(good);
        int nameAt = 14;
        int ivAt = nameAt + parsed.keyName().length() + 2 + parsed.versionName().length() + 2;
        int wrappedAt = ivAt + parsed.iv().length + 2;
        int[] offsets = {8, 9, 10, 11, nameAt, ivAt, ivAt + 3, wrappedAt, wrappedAt + parsed.wrappedKey().length - 1, 300, 511};
        for (int offset : offsets) {
            byte[] bad = good.clone();
            bad[offset] ^= 1;
            store("t", bad);
            SealedFileSystem fresh = fs(new Configuration(conf)); // no data key kept: the KMS is asked
            IOException e = assertThrows(IOException.class, () -> readAll(fresh, fixture.sealedPath("t")),
                    "byte " + offset + " changed");
            assertTrue(e.getMessage().contains(fixture.sealedPath("t").toString()), e.getMessage());
            assertTrue(e.getMessage().contains("'" + SealedFixture.KEY) || e.getMessage().contains(SealedFixture.KEY + "@"),
                    "names the key: " + e.getMessage());
        }
        // another file's envelope (another data key) on this message
        Configuration perFile = new Configuration(conf);
        perFile.setLong(SealedFileSystem.DATA_KEY_WRITE_FILES, 0);
        write(fs(perFile), fixture.sealedPath("other"), data(10, 4));
        byte[] swapped = good.clone();
        System.arraycopy(stored("other"), 0, swapped, 0, Envelope.LENGTH);
        store("t", swapped);
        IOException e = assertThrows(IOException.class, () -> readAll(fs(new Configuration(conf)), fixture.sealedPath("t")));
        assertInstanceOf(SealedKeys.NoVersionMatches.class, e, e.toString());
        // cut short inside the envelope
        store("t", Arrays.copyOf(good, 300));
        e = assertThrows(IOException.class, () -> readAll(fs, fixture.sealedPath("t")));
        assertTrue(e.getMessage().contains("cut short"), e.getMessage());
        // intact again: reads
        store("t", good);
        assertArrayEquals(data, readAll(fs, fixture.sealedPath("t")));
    }

    @Test
    void theEnvelopeParserRefusesWhatItDoesNotKnow() throws Exception {
        byte[] good = Envelope.of(Envelope.KIND_HADOOP, false, "k", "k@0", new byte[16], new byte[32]).bytes();
        assertEquals("k@0", Envelope.parse(good).versionName());
        byte[] version = good.clone();
        version[8] = 2;
        assertTrue(assertThrows(IOException.class, () -> Envelope.parse(version)).getMessage().contains("format version 2"));
        byte[] kind = good.clone();
        kind[9] = 0;
        assertTrue(assertThrows(IOException.class, () -> Envelope.parse(kind)).getMessage().contains("KMS kind 0"));
        kind[9] = 7; // a kind this sealpipe has no client for: read (inspect shows it), refused when unwrapped
        assertEquals(7, Envelope.parse(kind).kind());
        byte[] padding = good.clone();
        padding[511] = 1;
        assertTrue(assertThrows(IOException.class, () -> Envelope.parse(padding)).getMessage().contains("padding"));
        byte[] overlong = good.clone();
        overlong[12] = 0x7f; // a key name running past the end
        assertThrows(IOException.class, () -> Envelope.parse(overlong));
        assertThrows(IOException.class, () -> Envelope.parse(Arrays.copyOf(good, 511)));
        assertThrows(IOException.class, () -> Envelope.of(Envelope.KIND_HADOOP, false, "k".repeat(255), "v".repeat(255), new byte[16], new byte[32]),
                "fields that do not fit in 512 bytes");
    }

    /** A 128-bit key wraps 16-byte data keys: refused before any file is made. */
    @Test
    void aDataKeyOfTheWrongSizeFailsCreateAndLeavesNoFile() throws Exception {
        fixture.createKey("short", 128);
        Configuration c = new Configuration(conf);
        c.set(SealedFileSystem.KEY_NAME, "short");
        SealedFileSystem fs = fs(c);
        IOException e = assertThrows(IOException.class, () -> write(fs, fixture.sealedPath("s"), data(5, 5)));
        assertTrue(e.getMessage().contains("16 bytes") && e.getMessage().contains("'short'"), e.getMessage());
        assertTrue(e.getMessage().contains(fixture.sealedPath("s").toString()), e.getMessage());
        assertFalse(Files.exists(tmp.resolve("s")), "no file");
    }

    /** A KMS's refusal (HTTP 403) stays an AccessControlException naming the key and the KMS, and no file is made. */
    @Test
    void aRefusalIsAnAccessControlExceptionAndCreatesNoFile() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        EnvelopeKeys keys = load(conf, () -> refusing(calls), System::nanoTime);
        try {
            AccessControlException e = assertThrows(AccessControlException.class, () -> keys.forWriting(false));
            assertTrue(e.getMessage().contains("'" + SealedFixture.KEY + "'") && e.getMessage().contains(fixture.keystore.toString()),
                    e.getMessage());
            assertTrue(e.getMessage().contains("GENERATE_EEK"), e.getMessage());
            Envelope envelope = Envelope.of(Envelope.KIND_HADOOP, false, SealedFixture.KEY, SealedFixture.KEY + "@0", new byte[16], new byte[32]);
            AccessControlException read = assertThrows(AccessControlException.class,
                    () -> keys.forReading(envelope, new Path("sfile:///r")));
            assertTrue(read.getMessage().contains("sfile:/r"), read.getMessage());
            assertEquals(2, calls.get());
        } finally {
            keys.close();
        }
    }

    private KeyProviderCryptoExtension refusing(AtomicInteger calls) throws IOException {
        KeyProvider real = fixture.provider();
        return ForwardingExtension.of(real, new ForwardingExtension.Calls(null) {
            @Override
            public EncryptedKeyVersion generateEncryptedKey(String name) throws IOException {
                calls.incrementAndGet();
                throw new AuthorizationException("User:nobody not allowed to do 'GENERATE_EEK' on '" + name + "'");
            }

            @Override
            public KeyVersion decryptEncryptedKey(EncryptedKeyVersion eek) throws IOException {
                calls.incrementAndGet();
                throw new AuthorizationException("User:nobody not allowed to do 'DECRYPT_EEK' on '"
                        + eek.getEncryptionKeyName() + "'");
            }
        });
    }

    @Test
    void anUnknownKeyModeFailsTheFileSystemsStart() {
        Configuration c = new Configuration(conf);
        c.set(SealedFileSystem.KEY_MODE, "wrapped");
        IOException e = assertThrows(IOException.class, () -> fs(c));
        assertTrue(e.getMessage().contains("sealpipe.fs.key.mode=wrapped"), e.getMessage());
    }

    /** Callers that need the same data key at once share one unwrap: forced with a latch, not by timing. */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    void callersOfOneDataKeyShareOneUnwrap() throws Exception {
        SealedFileSystem writer = fs(conf);
        write(writer, fixture.sealedPath("shared"), data(100, 1));
        Envelope envelope = Envelope.parse(stored("shared"));
        AtomicInteger generated = new AtomicInteger();
        AtomicInteger unwrapped = new AtomicInteger();
        java.util.concurrent.CountDownLatch inKms = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        EnvelopeKeys keys = load(conf, () -> blocking(counting(generated, unwrapped), inKms, release),
                System::nanoTime);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(3);
        try {
            List<java.util.concurrent.Future<?>> opens = new ArrayList<>();
            opens.add(threads.submit(() -> {
                keys.forReading(envelope, new Path("sfile:///first")).destroy();
                return null;
            }));
            inKms.await(); // the first caller is in the KMS call, holding it
            for (int i = 0; i < 2; i++) {
                opens.add(threads.submit(() -> {
                    keys.forReading(envelope, new Path("sfile:///joiner")).destroy();
                    return null;
                }));
            }
            try {
                while (keys.callersWaitingForUnwrap() < 2) { // until both wait for the call in progress
                    if (Thread.interrupted() || opens.get(1).isDone() || opens.get(2).isDone()) {
                        break; // a joiner that ended did not wait: fails below
                    }
                    Thread.onSpinWait();
                }
                assertEquals(2, keys.callersWaitingForUnwrap(), "both callers wait for the unwrap in progress");
            } finally {
                release.countDown();
            }
            for (java.util.concurrent.Future<?> open : opens) {
                open.get();
            }
            assertEquals(1, unwrapped.get(), "three callers, one unwrap");
        } finally {
            release.countDown();
            threads.shutdownNow();
            keys.close();
        }
    }

    /** An extension whose first unwrap says it has begun and waits to be released. */
    private static KeyProviderCryptoExtension blocking(KeyProviderCryptoExtension real,
            java.util.concurrent.CountDownLatch inKms, java.util.concurrent.CountDownLatch release) {
        return ForwardingExtension.of(real, new ForwardingExtension.Calls(real) {
            @Override
            public KeyVersion decryptEncryptedKey(EncryptedKeyVersion eek) throws IOException, GeneralSecurityException {
                inKms.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException("interrupted");
                }
                return super.decryptEncryptedKey(eek);
            }
        });
    }

    /** After a roll, new data keys are wrapped under the new version (here at once: refresh 0), and old files read. */
    @Test
    void afterARollNewFilesAreUnderTheNewVersionAndOldFilesRead() throws Exception {
        Configuration eager = new Configuration(conf);
        eager.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, 0);
        eager.setLong(SealedFileSystem.DATA_KEY_WRITE_FILES, 0);
        SealedFileSystem fs = fs(eager);
        write(fs, fixture.sealedPath("old"), data(50, 1));
        fixture.rollKey();
        write(fs, fixture.sealedPath("new"), data(60, 2));
        assertEquals(SealedFixture.KEY + "@0", Envelope.parse(stored("old")).versionName());
        assertEquals(SealedFixture.KEY + "@1", Envelope.parse(stored("new")).versionName());
        SealedFileSystem reader = fs(new Configuration(conf));
        assertArrayEquals(data(50, 1), readAll(reader, fixture.sealedPath("old")));
        assertArrayEquals(data(60, 2), readAll(reader, fixture.sealedPath("new")));

        SealedFileSystem lazy = fs(new Configuration(conf)); // the defaults: its data key until its bounds
        write(lazy, fixture.sealedPath("before"), data(5, 3));
        fixture.rollKey();
        write(lazy, fixture.sealedPath("after"), data(5, 4));
        assertEquals(SealedFixture.KEY + "@1", Envelope.parse(stored("before")).versionName());
        assertEquals(SealedFixture.KEY + "@1", Envelope.parse(stored("after")).versionName(),
                "a running file system keeps its data key until its bounds: the new version from its next data key");
    }

    /**
     * A KMS client renewed (after {@code sealpipe.fs.key.refresh.seconds}) while a call runs on
     * the old one is closed only once that call is done, and a file system closed meanwhile the
     * same: closing a KMS client stops what the call still needs.
     */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    void aKmsClientIsClosedOnlyOnceItsCallsAreDone() throws Exception {
        SealedFileSystem writer = fs(conf);
        write(writer, fixture.sealedPath("renewed"), data(10, 1));
        Envelope envelope = Envelope.parse(stored("renewed"));
        AtomicLong clock = new AtomicLong();
        Configuration refresh = new Configuration(conf);
        refresh.setLong(SealedFileSystem.KEY_REFRESH_SECONDS, 10);
        refresh.setInt(SealedFileSystem.DATA_KEY_READ_KEYS, 0); // every open asks the KMS
        java.util.concurrent.CountDownLatch inKms = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<AtomicInteger> closes = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicInteger made = new AtomicInteger();
        EnvelopeKeys keys = load(refresh, () -> {
            AtomicInteger closed = new AtomicInteger();
            closes.add(closed);
            KeyProviderCryptoExtension real = made.getAndIncrement() == 0
                    ? blocking(counting(new AtomicInteger(), new AtomicInteger()), inKms, release)
                    : counting(new AtomicInteger(), new AtomicInteger());
            return new KeyProviderCryptoExtension(real, null) {
                @Override
                public KeyVersion decryptEncryptedKey(EncryptedKeyVersion eek) throws IOException, GeneralSecurityException {
                    return real.decryptEncryptedKey(eek);
                }

                @Override
                public void close() throws IOException {
                    closed.incrementAndGet();
                    real.close();
                }
            };
        }, clock::get);
        java.util.concurrent.ExecutorService thread = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<?> slow = thread.submit(() -> {
                keys.forReading(envelope, new Path("sfile:///slow")).destroy();
                return null;
            });
            inKms.await(); // a call on the first client is in the KMS
            clock.addAndGet(10_000_000_000L); // its refresh period is up: the next call renews it
            keys.forReading(envelope, new Path("sfile:///next")).destroy();
            assertEquals(2, closes.size(), "a second client made");
            assertEquals(0, closes.get(0).get(), "the first client stays open while its call runs");
            release.countDown();
            slow.get();
            assertEquals(1, closes.get(0).get(), "closed once its call is done");
            keys.close();
            assertEquals(1, closes.get(1).get(), "the second closed with the file system");
        } finally {
            release.countDown();
            thread.shutdownNow();
            keys.close();
        }
    }

    /**
     * A data key is dropped once its bounds are reached, with no further call: the one kept for
     * writing as soon as it sealed its last file, and every key once its seconds are up (a timed
     * sweep, which this waits for: up to a minute, never a fixed sleep).
     */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    void keysAreDroppedAtTheirBoundsWithNoFurtherCall() throws Exception {
        Configuration three = new Configuration(conf);
        three.setLong(SealedFileSystem.DATA_KEY_WRITE_FILES, 3);
        three.setInt(SealedFileSystem.DATA_KEY_READ_KEYS, 0);
        EnvelopeKeys keys = load(three, () -> counting(new AtomicInteger(), new AtomicInteger()),
                System::nanoTime);
        try {
            for (int i = 0; i < 3; i++) {
                assertEquals(i == 0 ? 0 : 1, keys.heldKeys(), "the data key, kept for writing, before file " + i);
                keys.forWriting(false).streams().destroy();
            }
            assertEquals(0, keys.heldKeys(), "used up by its third file: dropped at once");
        } finally {
            keys.close();
        }

        Configuration brief = new Configuration(conf);
        brief.setLong(SealedFileSystem.DATA_KEY_WRITE_SECONDS, 1);
        brief.setLong(SealedFileSystem.DATA_KEY_READ_SECONDS, 1);
        EnvelopeKeys timed = load(brief, () -> counting(new AtomicInteger(), new AtomicInteger()),
                System::nanoTime);
        try {
            timed.forWriting(false).streams().destroy();
            assertEquals(2, timed.heldKeys(), "kept for writing, and for reading its own files");
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (timed.heldKeys() > 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // the sweep runs a second after the key was made
            }
            assertEquals(0, timed.heldKeys(), "dropped by the timed sweep, with no call since");
        } finally {
            timed.close();
        }
    }

    /** A file sealed under another KMS key is refused before any KMS call, even where the reader could unwrap it. */
    @Test
    void aFileOfAnotherKeyIsRefusedBeforeAnyKmsCall() throws Exception {
        fixture.createKey("scratch", 256);
        Configuration scratch = new Configuration(conf);
        scratch.set(SealedFileSystem.KEY_NAME, "scratch");
        write(fs(scratch), fixture.sealedPath("forged"), data(10, 1));
        SealedFileSystem reader = fs(new Configuration(conf));
        IOException e = assertThrows(SealedKeys.NoVersionMatches.class, () -> readAll(reader, fixture.sealedPath("forged")));
        assertTrue(e.getMessage().contains("'scratch'") && e.getMessage().contains("'data'"), e.getMessage());
        assertEquals(0, reader.envelopeKeys().calls(), "no KMS call");
    }

    /** A file whose data key another kind of KMS wrapped is refused before any KMS call, naming both kinds. */
    @Test
    void aFileOfAnotherKmsKindIsRefusedBeforeAnyKmsCall() throws Exception {
        write(fs(new Configuration(conf)), fixture.sealedPath("aws"), data(10, 1));
        byte[] stored = stored("aws");
        stored[9] = Envelope.KIND_AWS;
        store("aws", stored);
        SealedFileSystem reader = fs(new Configuration(conf));
        IOException e = assertThrows(IOException.class, () -> readAll(reader, fixture.sealedPath("aws")));
        assertTrue(e.getMessage().contains("kind 2, AWS KMS") && e.getMessage().contains("kind 1, a Hadoop KeyProvider")
                && e.getMessage().contains(SealedFileSystem.KMS_CLASS), e.getMessage());
        assertEquals(0, reader.envelopeKeys().calls(), "no KMS call");
    }

    /**
     * Writers that need a new data key while one is being generated wait for that one call and
     * share its outcome: in a KMS outage they fail together after one timeout, not one after
     * another.
     */
    @Test
    @org.junit.jupiter.api.Timeout(120)
    void writersShareOneGenerationAndItsFailure() throws Exception {
        java.util.concurrent.CountDownLatch inKms = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger generations = new AtomicInteger();
        KeyProvider real = fixture.provider();
        EnvelopeKeys keys = load(conf, () -> new KeyProviderCryptoExtension(real, null) {
            @Override
            public EncryptedKeyVersion generateEncryptedKey(String name) throws IOException {
                generations.incrementAndGet();
                inKms.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException("interrupted");
                }
                throw new java.net.ConnectException("Connection refused (the KMS is down)");
            }
        }, System::nanoTime);
        java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(3);
        try {
            List<java.util.concurrent.Future<?>> writers = new ArrayList<>();
            writers.add(threads.submit(() -> keys.forWriting(false)));
            inKms.await();
            writers.add(threads.submit(() -> keys.forWriting(false)));
            writers.add(threads.submit(() -> keys.forWriting(false)));
            try {
                while (keys.callersWaitingForUnwrap() < 2) {
                    if (Thread.interrupted() || writers.get(1).isDone() || writers.get(2).isDone()) {
                        break;
                    }
                    Thread.onSpinWait();
                }
                assertEquals(2, keys.callersWaitingForUnwrap(), "two writers wait for the generation in progress");
            } finally {
                release.countDown();
            }
            for (java.util.concurrent.Future<?> writer : writers) {
                java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                        writer::get);
                assertTrue(e.getCause().getMessage().contains("the KMS is down"), e.getCause().toString());
            }
            assertEquals(1, generations.get(), "one call for three writers");
        } finally {
            release.countDown();
            threads.shutdownNow();
            keys.close();
        }
    }

    /** Makes the extension under a test's {@link HadoopEnvelopeKms}: one that counts, refuses or blocks. */
    @FunctionalInterface
    private interface Extension {
        KeyProviderCryptoExtension open() throws IOException;
    }

    /** The envelope keys of {@code c} on a {@link HadoopEnvelopeKms} over the extensions {@code extension} makes. */
    private static EnvelopeKeys load(Configuration c, Extension extension, java.util.function.LongSupplier clock)
            throws IOException {
        return EnvelopeKeys.load(c, null, 1, () -> new HadoopEnvelopeKms(extension.open(),
                c.get(SealedFileSystem.KEY_PROVIDER_PATH)), clock);
    }
}
