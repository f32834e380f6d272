package io.sealpipe.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The KMS client of envelope mode chosen by {@code sealpipe.fs.kms.class}: the class named there
 * wraps and unwraps every data key, Hadoop's by default; a class that is no {@link EnvelopeKms},
 * has no constructor that takes the configuration, or is of an envelope kind this version does
 * not know is refused with the setting named.
 */
class EnvelopeKmsTest {
    @TempDir
    java.nio.file.Path tmp;

    private SealedFixture fixture;
    private Configuration conf;

    @BeforeEach
    void setUp() throws IOException {
        fixture = new SealedFixture(tmp);
        conf = new Configuration(fixture.conf);
        conf.set(SealedFileSystem.KEY_MODE, "envelope"); // the fixture's sfile:// is not cached: a file system per get
        CountingKms.made.set(0);
        CountingKms.generated.set(0);
        CountingKms.unwrapped.set(0);
    }

    /** Hadoop's client for the keystore, to which a test's client hands every call. */
    abstract static class OverHadoop implements EnvelopeKms {
        final HadoopEnvelopeKms hadoop;

        OverHadoop(Configuration conf) throws IOException {
            hadoop = new HadoopEnvelopeKms(conf);
        }

        @Override
        public int kind() {
            return hadoop.kind();
        }

        @Override
        public String location() {
            return hadoop.location();
        }

        @Override
        public DataKey generate(String keyName) throws IOException {
            return hadoop.generate(keyName);
        }

        @Override
        public byte[] unwrap(WrappedKey wrapped) throws IOException {
            return hadoop.unwrap(wrapped);
        }

        @Override
        public WrappedKey rewrap(WrappedKey wrapped) throws IOException {
            return hadoop.rewrap(wrapped);
        }

        @Override
        public void close() throws IOException {
            hadoop.close();
        }
    }

    /** Counts the clients made, the data keys generated and the unwraps. */
    public static final class CountingKms extends OverHadoop {
        static final AtomicInteger made = new AtomicInteger();
        static final AtomicInteger generated = new AtomicInteger();
        static final AtomicInteger unwrapped = new AtomicInteger();

        public CountingKms(Configuration conf) throws IOException {
            super(conf);
            made.incrementAndGet();
        }

        @Override
        public DataKey generate(String keyName) throws IOException {
            generated.incrementAndGet();
            return super.generate(keyName);
        }

        @Override
        public byte[] unwrap(WrappedKey wrapped) throws IOException {
            unwrapped.incrementAndGet();
            return super.unwrap(wrapped);
        }
    }

    /** An envelope kind this version does not know. */
    public static final class OtherKindKms extends OverHadoop {
        public OtherKindKms(Configuration conf) throws IOException {
            super(conf);
        }

        @Override
        public int kind() {
            return 200;
        }
    }

    /** Names kind 0, which no envelope may carry. */
    public static final class NoKindKms extends OverHadoop {
        public NoKindKms(Configuration conf) throws IOException {
            super(conf);
        }

        @Override
        public int kind() {
            return 0;
        }
    }

    /** No constructor that takes a Configuration. */
    public static final class NoConfigurationKms {
        public NoConfigurationKms() {}
    }

    private static byte[] data() {
        byte[] data = new byte[40_000];
        new java.util.Random(7).nextBytes(data);
        return data;
    }

    /** Writes {@link #data} to {@code path} and reads it back. */
    private static byte[] roundTrip(FileSystem fs, Path path) throws IOException {
        try (OutputStream out = fs.create(path)) {
            out.write(data());
        }
        try (InputStream in = fs.open(path)) {
            return in.readAllBytes();
        }
    }

    @Test
    void theClassNamedWrapsAndUnwrapsEveryDataKey() throws Exception {
        // The positive control: by default Hadoop's client does it, and the counting one is not made.
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            roundTrip(fs, fixture.sealedPath("by-default"));
        }
        assertEquals(0, CountingKms.made.get(), "a KMS client of another class than configured");

        conf.set(SealedFileSystem.KMS_CLASS, CountingKms.class.getName());
        conf.setInt(SealedFileSystem.DATA_KEY_READ_KEYS, 0); // every open unwraps
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            Path path = fixture.sealedPath("counted");
            assertArrayEquals(data(), roundTrip(fs, path));
            assertEquals(1, CountingKms.generated.get(), "one data key generated, by the class named");
            assertEquals(2, CountingKms.unwrapped.get(), "two unwraps: of the new data key, and for the open");
            try (InputStream in = fs.open(fixture.sealedPath("by-default"))) {
                assertArrayEquals(data(), in.readAllBytes(), "a file of Hadoop's client opens through the counting one");
            }
            assertEquals(3, CountingKms.unwrapped.get());
        }
        Configuration hadoop = new Configuration(conf);
        hadoop.unset(SealedFileSystem.KMS_CLASS);
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), hadoop);
                InputStream in = fs.open(fixture.sealedPath("counted"))) {
            assertArrayEquals(data(), in.readAllBytes(), "and a file of the counting one through Hadoop's");
        }
    }

    @Test
    void aClassThatIsNoEnvelopeKmsOrLacksTheConstructorIsRefusedNamingTheSetting() {
        for (String named : new String[] {String.class.getName(), NoConfigurationKms.class.getName(), "no.such.Kms"}) {
            conf.set(SealedFileSystem.KMS_CLASS, named);
            Exception e = assertThrows(Exception.class, () -> FileSystem.get(URI.create("sfile:///"), conf).close(), named);
            String messages = messages(e);
            assertTrue(messages.contains(SealedFileSystem.KMS_CLASS + " is " + named), messages);
            assertTrue(messages.contains(EnvelopeKms.class.getName()), messages);
        }
    }

    @Test
    void aClientOfNoEnvelopeKindIsRefusedBeforeAnyFileIsMade() throws Exception {
        conf.set(SealedFileSystem.KMS_CLASS, NoKindKms.class.getName());
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            Path path = fixture.sealedPath("no-kind");
            IOException e = assertThrows(IOException.class, () -> fs.create(path).close());
            assertTrue(messages(e).contains("envelope kind 0, which is not one a client may name"), messages(e));
            assertFalse(fs.exists(path), "a failed create made a file");
        }
    }

    /** A user's own kind (200) seals and reads; Hadoop's client refuses its files before any KMS call. */
    @Test
    void aClientOfAUsersOwnKindSealsItsKindAndOnlyItsKindReadsThem() throws Exception {
        conf.set(SealedFileSystem.KMS_CLASS, OtherKindKms.class.getName());
        Path path = fixture.sealedPath("other-kind");
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            try (OutputStream out = fs.create(path)) {
                out.write(data());
            }
            try (InputStream in = fs.open(path)) {
                assertArrayEquals(data(), in.readAllBytes());
            }
        }
        Configuration hadoop = new Configuration(conf);
        hadoop.unset(SealedFileSystem.KMS_CLASS);
        try (SealedFileSystem fs = (SealedFileSystem) FileSystem.newInstance(URI.create("sfile:///"), hadoop)) {
            IOException e = assertThrows(IOException.class, () -> fs.open(path).readAllBytes());
            assertTrue(messages(e).contains("kind 200, a user's own KMS client"), messages(e));
            assertEquals(0, fs.envelopeKeys().calls(), "refused before any KMS call");
        }
    }

    @Test
    void hadoopsClientGivesTheWrappedFormAndRewrapsUnderTheCurrentVersionToTheSameDataKey() throws Exception {
        EnvelopeKms.WrappedKey wrapped;
        byte[] key;
        try (HadoopEnvelopeKms kms = new HadoopEnvelopeKms(conf)) {
            EnvelopeKms.DataKey made = kms.generate(SealedFixture.KEY);
            assertNull(made.key(), "Hadoop's KMS gives the wrapped form only: the file system unwraps it");
            wrapped = made.wrapped();
            key = kms.unwrap(wrapped);
            assertEquals(32, key.length);
        }
        fixture.rollKey();
        try (HadoopEnvelopeKms kms = new HadoopEnvelopeKms(conf)) { // a new client sees the new version
            EnvelopeKms.WrappedKey again = kms.rewrap(wrapped);
            assertNotEquals(wrapped.versionName(), again.versionName(), "wrapped under the key's new version");
            assertFalse(java.util.Arrays.equals(wrapped.wrapped(), again.wrapped()));
            assertArrayEquals(key, kms.unwrap(again), "the same data key");
            assertArrayEquals(key, kms.unwrap(wrapped), "and the old form still unwraps");
        }
    }

    private static String messages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            all.append(t).append(" / ");
        }
        return all.toString();
    }
}
