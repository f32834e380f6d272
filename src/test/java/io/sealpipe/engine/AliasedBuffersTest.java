package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sealpipe.ChildJvm;
import io.sealpipe.engine.jce.JceEngine;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two buffers that are different objects over the same memory (duplicates and slices of one
 * direct buffer, two wraps of one array) are one memory to every engine: in place (the same
 * start) gives the bytes a plain one-shot {@code javax.crypto} call gives, disjoint ranges of one
 * memory work, and a partial overlap is refused with IllegalArgumentException before anything is
 * written, by every engine: each compares the addresses that libsealpipe or JNA reads (Engines
 * has loaded them), and a jce engine made before anything asked Engines compares those read
 * through {@code sun.misc.Unsafe}. Sizes around and well above the JCE engine's
 * {@link JceEngine#SLICE}, which it feeds to its provider one slice at a time: a slice's output
 * written over the next slice's input gave wrong bytes (or a false authentication failure) there.
 * Every failing case of an engine is collected, so one run shows them all.
 */
class AliasedBuffersTest {
    private static final int SLICE = JceEngine.SLICE;
    private static final int[] SIZES = {1000, SLICE - 1, SLICE, SLICE + 1, 100 * 1024, 100 * 1024 + 5};
    /** Where the output starts relative to the input: after it by these, or before it (negative). */
    private static final int[] SHIFTS = {1, 16, 4096, SLICE, -16};
    private static final int MARGIN = SLICE + 64; // room before the data for the shifts, after it for the tag
    private static final byte[] KEY = new byte[32];
    private static final byte[] IV = new byte[16];
    private static final byte[] NONCE = new byte[AeadCipher.NONCE_LENGTH];

    static {
        new Random(11).nextBytes(KEY);
        new Random(12).nextBytes(IV);
        new Random(13).nextBytes(NONCE);
    }

    /** One memory of {@code size} random bytes, direct or a heap array. */
    private static ByteBuffer memory(boolean direct, int size, int seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return (direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size)).put(bytes).clear();
    }

    private static byte[] contents(ByteBuffer memory) {
        byte[] copy = new byte[memory.capacity()];
        memory.duplicate().clear().get(copy);
        return copy;
    }

    private static byte[] range(ByteBuffer memory, int from, int length) {
        byte[] copy = new byte[length];
        memory.duplicate().clear().position(from).get(copy);
        return copy;
    }

    /** A duplicate positioned on the range: its own object, the memory's addresses. */
    private static ByteBuffer view(ByteBuffer memory, int from, int length) {
        return memory.duplicate().clear().position(from).limit(from + length);
    }

    /** A slice of the range: its own object, starting at index 0 (another address for a direct one). */
    private static ByteBuffer sliceView(ByteBuffer memory, int from, int length) {
        return view(memory, from, length).slice();
    }

    private static byte[] ctrReference(byte[] in) throws Exception {
        Cipher c = Cipher.getInstance("AES/CTR/NoPadding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(KEY, "AES"), new IvParameterSpec(IV));
        return c.doFinal(in);
    }

    private static byte[] gcmSealReference(byte[] plain) throws Exception {
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(KEY, "AES"), new GCMParameterSpec(128, NONCE));
        return c.doFinal(plain);
    }

    private interface Call {
        void run(ByteBuffer in, ByteBuffer out) throws Exception;
    }

    /**
     * {@code input} in place through two objects over {@code memory}: the output must be
     * {@code expected}; then from and to disjoint ranges of the same memory, with the same result.
     */
    private static void checkInPlaceAndDisjoint(List<String> failures, String what, ByteBuffer memory, byte[] input,
            int outLength, byte[] expected, Call call) {
        byte[] before = contents(memory);
        int at = 64;
        view(memory, at, input.length).put(input);
        try {
            call.run(view(memory, at, input.length), sliceView(memory, at, outLength));
            if (!Arrays.equals(expected, range(memory, at, outLength))) {
                failures.add(what + ", in place: wrong bytes");
            }
        } catch (Exception | AssertionError e) {
            failures.add(what + ", in place: " + e);
        }
        memory.clear().put(before).clear();
        int outAt = at + input.length;
        view(memory, at, input.length).put(input);
        try {
            call.run(sliceView(memory, at, input.length), view(memory, outAt, outLength));
            if (!Arrays.equals(expected, range(memory, outAt, outLength))) {
                failures.add(what + ", disjoint ranges of one memory: wrong bytes");
            }
        } catch (Exception | AssertionError e) {
            failures.add(what + ", disjoint ranges of one memory: " + e);
        }
        memory.clear().put(before).clear();
    }

    /**
     * {@code input} with the output starting at each of {@link #SHIFTS} from it, so that input and
     * output data partly overlap: each must be refused with IllegalArgumentException, the memory
     * left as it was.
     */
    private static void checkPartialOverlapsRefused(List<String> failures, String what, ByteBuffer memory,
            byte[] input, int outLength, byte[] expected, Call call) {
        int inAt = MARGIN;
        view(memory, inAt, input.length).put(input);
        byte[] before = contents(memory);
        for (int shift : SHIFTS) {
            if (shift >= Math.min(input.length, outLength)) {
                continue; // the data do not overlap (an open's output over the input's tag alone is not tried here)
            }
            String where = what + ", output " + shift + " bytes after the input";
            try {
                call.run(view(memory, inAt, input.length), sliceView(memory, inAt + shift, outLength));
                failures.add(where + ": accepted, with "
                        + (Arrays.equals(expected, range(memory, inAt + shift, outLength)) ? "the right" : "wrong")
                        + " bytes");
            } catch (IllegalArgumentException e) {
                if (!Arrays.equals(before, contents(memory))) {
                    failures.add(where + ": refused after writing");
                }
            } catch (Exception | AssertionError e) {
                failures.add(where + ": " + e);
            }
            memory.clear().put(before).clear();
        }
    }

    private static String where(EngineKind kind, boolean direct, int size) {
        return kind.id() + ", " + (direct ? "direct" : "heap") + ", " + size + " bytes";
    }

    /** CTR in place, over disjoint ranges and over partial overlaps of one memory of {@code size} bytes. */
    private static void ctrCases(List<String> failures, CryptoEngine engine, boolean direct, int size)
            throws Exception {
        String what = "CTR, " + where(engine.kind(), direct, size);
        ByteBuffer memory = memory(direct, 2 * (size + MARGIN), size);
        byte[] input = range(memory, 0, size);
        byte[] expected = ctrReference(input);
        Call ctr = (in, out) -> {
            try (StreamCipher c = engine.newAesCtr(KEY, IV)) {
                assertEquals(size, c.update(in, out));
            }
        };
        checkInPlaceAndDisjoint(failures, what, memory, input, size, expected, ctr);
        checkPartialOverlapsRefused(failures, what, memory, input, size, expected, ctr);
    }

    /** GCM seal and open, each as {@link #ctrCases}. */
    private static void gcmCases(List<String> failures, CryptoEngine engine, boolean direct, int size)
            throws Exception {
        String what = where(engine.kind(), direct, size);
        ByteBuffer memory = memory(direct, 2 * (size + MARGIN), size);
        byte[] plain = range(memory, 0, size);
        byte[] sealed = gcmSealReference(plain);
        Call seal = (in, out) -> {
            try (AeadCipher gcm = engine.newAesGcm(KEY)) {
                assertEquals(sealed.length, gcm.seal(NONCE, null, in, out));
            }
        };
        checkInPlaceAndDisjoint(failures, "seal, " + what, memory, plain, sealed.length, sealed, seal);
        checkPartialOverlapsRefused(failures, "seal, " + what, memory, plain, sealed.length, sealed, seal);
        Call open = (in, out) -> {
            try (AeadCipher gcm = engine.newAesGcm(KEY)) {
                assertEquals(size, gcm.open(NONCE, null, in, out));
            }
        };
        checkInPlaceAndDisjoint(failures, "open, " + what, memory, sealed, size, plain, open);
        checkPartialOverlapsRefused(failures, "open, " + what, memory, sealed, size, plain, open);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void ctrThroughViewsOfOneMemory(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        for (boolean direct : new boolean[] {true, false}) {
            for (int size : SIZES) {
                ctrCases(failures, engine, direct, size);
            }
        }
        assertEquals(List.of(), failures);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void gcmThroughViewsOfOneMemory(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        for (boolean direct : new boolean[] {true, false}) {
            for (int size : SIZES) {
                gcmCases(failures, engine, direct, size);
            }
        }
        assertEquals(List.of(), failures);
    }

    /**
     * The JVM that {@link #aJceEngineMadeDirectlyRefusesOverlapsOfViews} starts: the direct
     * cases on a jce engine made directly, before anything has asked {@link Engines}.
     */
    public static void main(String[] args) throws Exception {
        CryptoEngine engine = JceEngine.withDefaultProvider();
        List<String> failures = new ArrayList<>();
        for (int size : new int[] {SLICE + 1, 100 * 1024 + 5}) {
            ctrCases(failures, engine, true, size);
            gcmCases(failures, engine, true, size);
        }
        System.out.println("failures: " + failures);
    }

    /**
     * A jce engine made directly ({@code JceEngine.withDefaultProvider()}) in a JVM where
     * nothing has asked {@link Engines}, so that neither libsealpipe nor JNA has loaded to give
     * addresses (the JVM's class loading log must show neither libsealpipe's bridge nor JNA's
     * {@code Native}): views of one direct buffer are compared all the same, by the addresses
     * read through {@code sun.misc.Unsafe}, so partial overlaps are refused and in place and
     * disjoint ranges give the right bytes.
     */
    @Test
    @DisabledIfSystemProperty(named = "sealpipe.test.rerun", matches = "aarch64",
            disabledReason = "under qemu-user the aarch64 JVM cannot start a child JVM (no binfmt for its exec)")
    void aJceEngineMadeDirectlyRefusesOverlapsOfViews(@TempDir Path dir) throws Exception {
        List<String> command = ChildJvm.command("-Xlog:class+load=info", "-cp", System.getProperty("java.class.path"),
                AliasedBuffersTest.class.getName());
        // The child's output goes to a file, read once it exited: a child that hangs is killed
        // after 2 minutes, not waited for until the fork's own timeout.
        Path log = dir.resolve("child.log");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        Process p = pb.start();
        p.getOutputStream().close();
        boolean exited = p.waitFor(120, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly().waitFor();
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        String out = lines.stream().filter(l -> !l.startsWith("[")).collect(Collectors.joining("\n"));
        assertTrue(exited, () -> "the child JVM did not finish within 2 minutes, and was killed: " + out);
        assertEquals(0, p.exitValue(), out);
        for (String absent : List.of("io.sealpipe.engine.openssl.NativeCrypto", "com.sun.jna.Native",
                "io.sealpipe.engine.Engines")) {
            assertEquals(List.of(), lines.stream().filter(l -> l.startsWith("[") && l.contains(" " + absent + " "))
                    .toList(), absent + " loaded");
        }
        assertEquals("failures: []", out);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void openChunksRefusesAnyOverlapOfViews(EngineKind kind) throws Exception {
        CryptoEngine engine = TestEngines.engine(kind);
        int sealedLength = 2 * AeadCipher.SEALED_CHUNK_SIZE;
        ByteBuffer memory = memory(true, sealedLength + 4096, 3);
        byte[] before = contents(memory);
        try (AeadCipher gcm = engine.newAesGcm(KEY)) {
            assertThrows(IllegalArgumentException.class, () -> gcm.openChunks(NONCE, 0, view(memory, 0, sealedLength),
                    sliceView(memory, 0, 2 * AeadCipher.CHUNK_SIZE)));
            assertThrows(IllegalArgumentException.class, () -> gcm.openChunks(NONCE, 0, view(memory, 0, sealedLength),
                    sliceView(memory, 4000, 2 * AeadCipher.CHUNK_SIZE)));
            assertThrows(IllegalArgumentException.class, () -> gcm.openChunks(NONCE, 0,
                    sliceView(memory, 4000, sealedLength), view(memory, 0, 2 * AeadCipher.CHUNK_SIZE)));
        }
        assertArrayEquals(before, contents(memory), "nothing written");
    }

    /**
     * A partial overlap is refused without writing a byte of the memory, not even one put back
     * at once: another thread, or another process sharing the memory, may read or write it in
     * between. Seen through a private (copy-on-write) mapping of a file: on Linux a page of it
     * that is never written shows the file's bytes as they change, while a write, even of the
     * byte already there, gives the mapping a copy of the page that no longer follows the file.
     * So once the refused calls are done, new contents written to the file through its channel
     * must show in every page of the mapping.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void aRefusedOverlapWritesNothing(EngineKind kind, @TempDir Path dir) throws Exception {
        assumeTrue(System.getProperty("os.name").equals("Linux"), "the copy-on-write view needs Linux's mmap");
        CryptoEngine engine = TestEngines.engine(kind);
        int size = 2 * SLICE + 5;
        int fileSize = size + 2 * MARGIN;
        byte[] original = new byte[fileSize];
        new Random(21).nextBytes(original);
        Path file = Files.write(dir.resolve("memory"), original);
        List<String> failures = new ArrayList<>();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MappedByteBuffer memory = channel.map(FileChannel.MapMode.PRIVATE, 0, fileSize);
            int inAt = MARGIN;
            for (int shift : SHIFTS) {
                String where = kind.id() + ", output " + shift + " bytes after the input";
                try (AeadCipher gcm = engine.newAesGcm(KEY)) {
                    gcm.seal(NONCE, null, view(memory, inAt, size), sliceView(memory, inAt + shift, size + 16));
                    failures.add(where + ": GCM seal accepted");
                } catch (IllegalArgumentException expected) {
                    // refused: what this test checks is that nothing was written first
                }
                if (kind.supports(Operation.CTR)) {
                    try (StreamCipher ctr = engine.newAesCtr(KEY, IV)) {
                        ctr.update(view(memory, inAt, size), sliceView(memory, inAt + shift, size));
                        failures.add(where + ": CTR update accepted");
                    } catch (IllegalArgumentException expected) {
                        // refused
                    }
                }
            }
            byte[] changed = new byte[fileSize];
            new Random(22).nextBytes(changed);
            for (ByteBuffer src = ByteBuffer.wrap(changed); src.hasRemaining(); ) {
                channel.write(src, src.position());
            }
            byte[] seen = contents(memory);
            int page = 4096;
            for (int at = 0; at < fileSize; at += page) {
                int end = Math.min(fileSize, at + page);
                if (!Arrays.equals(changed, at, end, seen, at, end)) {
                    failures.add("bytes " + at + ".." + (end - 1) + " of the mapping no longer follow the file: "
                            + (Arrays.equals(original, at, end, seen, at, end) ? "a write put back what was there"
                                    : "a write changed them"));
                }
            }
        }
        assertEquals(List.of(), failures);
    }
}
