package io.sealpipe;

import static io.sealpipe.CtrFixtures.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The documented limit of {@code decrypt(ByteBuffer)} over a mapped file (issue 12, point 6): if
 * the file shrinks while it is read, the mapping's pages past the new end fault (SIGBUS) when
 * touched. The JVM turns a fault in its own copy code into {@link InternalError}, so JCE readers
 * survive; a fault in native code kills the JVM, as openssl-jni's reads (which go straight to
 * OpenSSL) and some of openssl-jna's (CTR) show.
 * We keep the copy-free read (a copy through the heap costs what the copying source costs in
 * CtrBufferReadBenchmark, about 5 %, and would still end in InternalError, not an IOException)
 * and document the limit where the mapping is recommended. These tests pin both behaviours, each
 * in a child JVM (one may die), and show the remedy the documentation gives: read a file that may
 * shrink through its FileChannel, where the cut is an ordinary end of stream or, with GCM, an
 * authentication failure.
 */
class MappedFileShrinkTest {
    private static final byte[] KEY = bytes(7, 32);
    private static final byte[] IV = CtrFixtures.ivs().get("random");
    private static final int SIZE = 4 << 20;
    private static final int FIRST = 100; // read before the truncation

    @TempDir
    Path dir;

    static Stream<Arguments> cases() {
        return TestEngines.kinds().flatMap(kind -> kind.supports(Operation.CTR)
                ? Stream.of(Arguments.of(kind, "ctr"), Arguments.of(kind, "gcm")) : Stream.of(Arguments.of(kind, "gcm")));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("cases")
    void readingAMappedFileThatShrankFailsWithInternalErrorInJavaAndKillsTheJvmInNativeCode(EngineKind kind, String format)
            throws Exception {
        TestEngines.engine(kind); // skipped here if the engine cannot load
        assumeTrue(System.getProperty("os.name").startsWith("Linux"),
                "a mapped file can be truncated (and then fault) on Linux; Windows refuses the truncation");
        Path file = dir.resolve(format + ".sealed");
        Files.write(file, seal(format, kind, bytes(11, SIZE)));
        List<String> command = ChildJvm.command("-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"),
                "-XX:-CreateCoredumpOnCrash", "-cp", System.getProperty("java.class.path"), Child.class.getName(),
                kind.id(), format, file.toString());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "child JVM did not finish: " + out);

        assertTrue(out.contains("first bytes right, file truncated"), out);
        assertFalse(out.contains("read returned"), "the read never goes on as if nothing happened: " + out);
        boolean died = p.exitValue() != 0;
        if (died) {
            assertTrue(out.contains("SIGBUS"), "the JVM's fatal error report names the signal: " + out);
            assertFalse(out.contains("read failed"), out);
        } else {
            assertTrue(out.contains("read failed: java.lang.InternalError"), out);
        }
        // The limit as documented: JCE reads in Java and survives; openssl-jni reads in OpenSSL and
        // dies; openssl-jna does either, depending on whether it hands the buffer to OpenSSL.
        if (kind == EngineKind.JCE) {
            assertFalse(died, out);
        } else if (kind == EngineKind.OPENSSL_JNI) {
            assertTrue(died, out);
        }
    }

    /** The remedy: through the FileChannel, a CTR stream just ends at the cut, a GCM stream fails authentication. */
    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("cases")
    void throughTheFileChannelAShrunkFileIsAnOrdinaryShortOrInauthenticStream(EngineKind kind, String format)
            throws IOException {
        byte[] plain = bytes(11, 300_000);
        Path file = dir.resolve(format + ".sealed");
        Files.write(file, seal(format, kind, plain));
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
                InputStream in = open(format, kind, channel)) {
            assertArrayEquals(Arrays.copyOf(plain, FIRST), in.readNBytes(FIRST));
            channel.truncate(150_000); // past what the first read buffered
            if (format.equals("ctr")) {
                assertArrayEquals(Arrays.copyOfRange(plain, FIRST, 150_000), in.readAllBytes(), "ends at the cut");
            } else {
                assertThrows(StreamAuthenticationException.class, in::readAllBytes);
            }
        }
    }

    private static byte[] seal(String format, EngineKind kind, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = format.equals("ctr") ? ctr(kind).encrypt(sink) : gcm(kind).encrypt(sink)) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    private static InputStream open(String format, EngineKind kind, FileChannel channel) {
        return format.equals("ctr") ? ctr(kind).decrypt(channel) : gcm(kind).decrypt(channel);
    }

    private static CtrStreams ctr(EngineKind kind) {
        return CtrStreams.builder().key(KEY).iv(IV).engine(TestEngines.engine(kind)).closeUnderlying(false).build();
    }

    private static GcmStreams gcm(EngineKind kind) {
        return GcmStreams.builder().key(KEY).engine(TestEngines.engine(kind)).closeUnderlying(false).build();
    }

    /**
     * Maps the file, reads a little through {@code decrypt(ByteBuffer)}, truncates the file to
     * nothing, reads on, and prints what happened (if it can).
     */
    public static final class Child {
        public static void main(String[] args) throws IOException {
            EngineKind kind = EngineKind.fromId(args[0]);
            String format = args[1];
            Path file = Path.of(args[2]);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
                InputStream in = format.equals("ctr")
                        ? CtrStreams.builder().key(KEY).iv(IV).engine(kind).build().decrypt(mapped)
                        : GcmStreams.builder().key(KEY).engine(kind).build().decrypt(mapped);
                byte[] first = in.readNBytes(FIRST);
                channel.truncate(0);
                System.out.println((Arrays.equals(first, Arrays.copyOf(bytes(11, SIZE), FIRST)) ? "first bytes right"
                        : "first bytes WRONG") + ", file truncated");
                System.out.flush();
                try {
                    System.out.println("read returned " + in.readAllBytes().length + " more bytes");
                } catch (Throwable t) {
                    System.out.println("read failed: " + t);
                }
            }
        }
    }
}
