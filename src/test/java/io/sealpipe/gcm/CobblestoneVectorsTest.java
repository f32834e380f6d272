package io.sealpipe.gcm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sealpipe.MemorySeekableChannel;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Wycheproof's {@code c2sp_chunked_encryption_aes_128_gcm_test.json} (Cobblestone-128), applied
 * as Wycheproof's {@code doc/c2sp_chunked_encryption.md} says, on every engine:
 *
 * <ul>
 *   <li>the streaming reader, through several read patterns: a valid vector gives its message
 *       (msgLength bytes with SHA-512 msgSha512); an invalid one throws
 *       {@link StreamAuthenticationException} after releasing at most its authentic prefix, and
 *       every later call throws again, never a clean end; a key of the wrong size is refused
 *       by the builder;
 *   <li>the random-access channel over a file and over a non-file channel: reading the whole
 *       message succeeds exactly for valid vectors, and {@code size()} (which authenticates the
 *       final chunk) fails for every invalid vector except those flagged ValidFinalChunk;
 *   <li>raw mode (no header; aeadKey and baseNonce) on the engine's {@link AeadCipher}:
 *       {@code openChunks} for whole chunks and {@code open} for the final one, and
 *       re-encryption with {@code sealChunks} and {@code seal}, which must give ct without its
 *       56-byte header;
 *   <li>{@link GcmStreams} with the vector's salt injected, which must reproduce ct exactly.
 * </ul>
 *
 * The vectors carry only the messages' length and hash, so an independent decryption with
 * {@code javax.crypto} (itself checked against msgLength and msgSha512) recovers each message,
 * and for an invalid vector its authentic prefix. Failures are collected, then asserted empty,
 * so one run shows them all.
 */
class CobblestoneVectorsTest {
    private static final String RESOURCE = "/vectors/wycheproof/c2sp_chunked_encryption_aes_128_gcm_test.json";
    private static final HexFormat HEX = HexFormat.of();
    private static final int HEADER = Cobblestone.HEADER_LENGTH;
    private static final int SALT = Cobblestone.SALT_LENGTH;
    private static final int CHUNK = Cobblestone.CHUNK_SIZE;
    private static final int SEALED = Cobblestone.SEALED_CHUNK_SIZE;
    private static final int TAG = Cobblestone.TAG_LENGTH;
    /** Fills output arrays first, to show which bytes a failed decryption wrote. */
    private static final byte UNWRITTEN = 0x5a;

    private static List<Vector> vectors;

    @TempDir
    Path dir;

    /**
     * One test case. {@code expected} is the message of a valid vector, or the authentic prefix
     * of an invalid one (empty when the vector has no msgLength), as {@link #referenceOpen}
     * recovered it; {@code msgLength} is -1 when the vector has none.
     */
    record Vector(int tcId, String comment, boolean valid, Set<String> flags, byte[] key, byte[] ctx, byte[] ct,
            byte[] aeadKey, byte[] baseNonce, long msgLength, byte[] msgSha512, byte[] expected,
            boolean referenceComplete) {

        boolean has(String flag) {
            return flags.contains(flag);
        }

        String id() {
            return "tcId " + tcId + " (" + comment + ")";
        }

        /** How many plaintext bytes a reader may release: the message, or the authentic prefix. */
        long prefixLength() {
            return Math.max(msgLength, 0);
        }

        byte[] salt() {
            return Arrays.copyOf(ct, SALT);
        }

        byte[] body() {
            return Arrays.copyOfRange(ct, HEADER, ct.length);
        }
    }

    @BeforeAll
    static void load() throws IOException, DataFormatException, GeneralSecurityException {
        JsonNode root;
        try (InputStream in = CobblestoneVectorsTest.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("missing test resource " + RESOURCE);
            }
            root = new ObjectMapper().readTree(in);
        }
        List<Vector> all = new ArrayList<>();
        for (JsonNode group : root.get("testGroups")) {
            assertEquals("ChunkedEncryption", group.get("type").asText());
            assertEquals("AEAD_AES_128_GCM", group.get("aead").asText());
            assertEquals("SHA-512", group.get("sha").asText());
            for (JsonNode t : group.get("tests")) {
                Set<String> flags = new TreeSet<>();
                t.get("flags").forEach(f -> flags.add(f.asText()));
                byte[] ct = inflate(HEX.parseHex(t.get("ct").asText()));
                byte[] aeadKey = t.has("aeadKey") ? HEX.parseHex(t.get("aeadKey").asText()) : null;
                byte[] baseNonce = t.has("baseNonce") ? HEX.parseHex(t.get("baseNonce").asText()) : null;
                Reference ref = aeadKey == null
                        ? new Reference(new byte[0], false)
                        : referenceOpen(aeadKey, baseNonce, Arrays.copyOfRange(ct, HEADER, ct.length));
                all.add(new Vector(t.get("tcId").asInt(), t.get("comment").asText(),
                        t.get("result").asText().equals("valid"), flags,
                        HEX.parseHex(t.get("key").asText()), HEX.parseHex(t.get("ctx").asText()), ct,
                        aeadKey, baseNonce,
                        t.has("msgLength") ? t.get("msgLength").asLong() : -1,
                        t.has("msgSha512") ? HEX.parseHex(t.get("msgSha512").asText()) : null,
                        ref.plaintext(), ref.complete()));
            }
        }
        assertEquals(root.get("numberOfTests").asInt(), all.size(), "numberOfTests");
        vectors = all;
    }

    /** The vectors agree with the independent decryption the other tests compare against. */
    @Test
    void referenceDecryptionAgreesWithTheVectors() {
        List<String> failures = new ArrayList<>();
        int valid = 0;
        for (Vector v : vectors) {
            if (v.aeadKey() == null) {
                if (!v.has("HeaderFailure") || v.valid()) {
                    failures.add(v.id() + ": no aeadKey, but not a HeaderFailure vector");
                }
                continue;
            }
            if (v.valid()) {
                valid++;
                if (!v.referenceComplete()) {
                    failures.add(v.id() + ": the reference could not decrypt a valid vector");
                }
                String bad = checkMessage(v, v.expected());
                if (bad != null) {
                    failures.add(v.id() + ": reference " + bad);
                }
                continue;
            }
            if (v.referenceComplete()) {
                failures.add(v.id() + ": the reference decrypted an invalid vector completely");
            }
            if (v.expected().length != v.prefixLength()) {
                failures.add(v.id() + ": the reference's authentic prefix is " + v.expected().length
                        + " bytes, the vector says " + v.prefixLength());
            } else if (v.msgSha512() != null && !Arrays.equals(v.msgSha512(), sha512(v.expected()))) {
                failures.add(v.id() + ": the reference's authentic prefix does not hash to msgSha512");
            }
        }
        assertTrue(valid >= 10, "valid vectors: " + valid);
        assertEquals(List.of(), failures, failures.size() + " vectors disagree with the reference");
    }

    /** Cobblestone.derive gives aeadKey and baseNonce, and the commitment decides the header. */
    @Test
    void deriveGivesTheVectorsKeyNonceAndCommitment() {
        List<String> failures = new ArrayList<>();
        int derived = 0;
        int rejected = 0;
        for (Vector v : vectors) {
            if (v.aeadKey() != null) {
                derived++;
                Cobblestone.MessageKeys keys = Cobblestone.derive(v.key(), v.salt(), v.ctx());
                if (!Arrays.equals(v.aeadKey(), keys.key)) {
                    failures.add(v.id() + ": key " + HEX.formatHex(keys.key) + ", expected aeadKey");
                }
                if (!Arrays.equals(v.baseNonce(), keys.baseNonce)) {
                    failures.add(v.id() + ": base nonce " + HEX.formatHex(keys.baseNonce) + ", expected baseNonce");
                }
                // Only header failures touch the salt or commitment.
                if (!keys.commitmentMatches(v.ct(), SALT)) {
                    failures.add(v.id() + ": the commitment of an intact header does not match");
                }
            } else if (v.key().length == 16 && v.ct().length >= HEADER) {
                rejected++; // wrong key, wrong context, modified salt or commitment
                if (Cobblestone.derive(v.key(), v.salt(), v.ctx()).commitmentMatches(v.ct(), SALT)) {
                    failures.add(v.id() + ": the commitment matches, but the header must be rejected");
                }
            }
        }
        assertTrue(derived >= 25 && rejected >= 4, "derived " + derived + ", rejected " + rejected);
        assertEquals(List.of(), failures, failures.size() + " derivations failed");
    }

    // ---- streaming ----

    /** Opens a stream over a ciphertext. */
    @FunctionalInterface
    interface StreamOpener {
        GcmInputStream open(GcmStreams gcm, byte[] ct);
    }

    /** One read call: appends what it read to {@code out}; returns the count, or -1 at the end. */
    @FunctionalInterface
    interface ReadStep {
        int read(GcmInputStream in, ByteArrayOutputStream out) throws IOException;
    }

    /** A read pattern; {@code steps} makes a fresh step (with its buffers and random lengths) per stream. */
    record ReadPattern(String name, StreamOpener opener, Supplier<ReadStep> steps) {}

    private static final List<ReadPattern> READ_PATTERNS = List.of(
            new ReadPattern("read(byte[65536])", (gcm, ct) -> gcm.decrypt(new ByteArrayInputStream(ct)),
                    () -> arrayReads(0, () -> 65536)),
            new ReadPattern("read(b, 3, 1000)", (gcm, ct) -> gcm.decrypt(new ByteArrayInputStream(ct)),
                    () -> arrayReads(3, () -> 1000)),
            new ReadPattern("read() each byte", (gcm, ct) -> gcm.decrypt(new ByteArrayInputStream(ct)),
                    () -> (in, out) -> {
                        int b = in.read();
                        if (b >= 0) {
                            out.write(b);
                        }
                        return b < 0 ? -1 : 1;
                    }),
            new ReadPattern("random lengths from a source giving one byte a call",
                    (gcm, ct) -> gcm.decrypt(new GcmRoundTripTest.OneByteAtATime(ct)),
                    () -> {
                        Random random = new Random(11);
                        return arrayReads(1, () -> 1 + random.nextInt(3 * CHUNK));
                    }),
            new ReadPattern("direct ByteBuffer(5000) from a channel",
                    (gcm, ct) -> gcm.decrypt(Channels.newChannel(new ByteArrayInputStream(ct))),
                    () -> bufferReads(ByteBuffer.allocateDirect(5000))),
            new ReadPattern("heap ByteBuffer(40000) from a channel",
                    (gcm, ct) -> gcm.decrypt(Channels.newChannel(new ByteArrayInputStream(ct))),
                    () -> bufferReads(ByteBuffer.allocate(40000))),
            new ReadPattern("read(b, 3, 1000) from a heap ByteBuffer at position 5",
                    (gcm, ct) -> gcm.decrypt(ByteBuffer.wrap(padded(ct, 5, 7), 5, ct.length)),
                    () -> arrayReads(3, () -> 1000)),
            new ReadPattern("read(byte[65536]) from a direct ByteBuffer",
                    (gcm, ct) -> gcm.decrypt(ByteBuffer.allocateDirect(ct.length).put(ct).flip()),
                    () -> arrayReads(0, () -> 65536)),
            new ReadPattern("direct ByteBuffer(5000) from a direct ByteBuffer",
                    (gcm, ct) -> gcm.decrypt(ByteBuffer.allocateDirect(ct.length).put(ct).flip()),
                    () -> bufferReads(ByteBuffer.allocateDirect(5000))));

    /** {@code data} with {@code before} and {@code after} bytes of 0xee around it. */
    private static byte[] padded(byte[] data, int before, int after) {
        byte[] b = new byte[before + data.length + after];
        Arrays.fill(b, (byte) 0xee);
        System.arraycopy(data, 0, b, before, data.length);
        return b;
    }

    private static ReadStep arrayReads(int offset, Supplier<Integer> lengths) {
        return (in, out) -> {
            int len = lengths.get();
            byte[] b = new byte[offset + len];
            int n = in.read(b, offset, len);
            if (n > 0) {
                out.write(b, offset, n);
            }
            return n;
        };
    }

    private static ReadStep bufferReads(ByteBuffer buffer) {
        return (in, out) -> {
            buffer.clear();
            int n = in.read(buffer);
            buffer.flip();
            byte[] part = new byte[buffer.remaining()];
            buffer.get(part);
            out.writeBytes(part);
            return n;
        };
    }

    /** A call on a stream that failed: it must throw the failure again. */
    @FunctionalInterface
    interface StreamCall {
        Object call(GcmInputStream in) throws IOException;
    }

    private static final List<Map.Entry<String, StreamCall>> AFTER_FAILURE = List.of(
            Map.entry("read()", in -> in.read()),
            Map.entry("read(byte[16])", in -> in.read(new byte[16])),
            Map.entry("read(byte[40000])", in -> in.read(new byte[40000], 0, 40000)),
            Map.entry("read(direct ByteBuffer)", in -> in.read(ByteBuffer.allocateDirect(64))),
            Map.entry("read(heap ByteBuffer)", in -> in.read(ByteBuffer.allocate(64))),
            Map.entry("skip(1)", in -> in.skip(1)),
            Map.entry("skip(100000)", in -> in.skip(100_000)),
            Map.entry("available()", in -> in.available()),
            Map.entry("readAllBytes()", in -> in.readAllBytes().length));

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void streamingReader(EngineKind kind) {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        int run = 0;
        for (Vector v : vectors) {
            if (v.has("InvalidKeySize")) {
                run++;
                try {
                    GcmStreams gcm = streams(v, engine, null);
                    failures.add(v.id() + ": a " + v.key().length + "-byte key was accepted: " + gcm);
                } catch (IllegalArgumentException expected) {
                    if (!String.valueOf(expected.getMessage()).contains("not " + v.key().length)) {
                        failures.add(v.id() + ": the message does not name the length: " + expected.getMessage());
                    }
                }
                continue;
            }
            GcmStreams gcm = streams(v, engine, null);
            for (ReadPattern pattern : READ_PATTERNS) {
                run++;
                String where = v.id() + ", " + pattern.name();
                try (GcmInputStream in = pattern.opener().open(gcm, v.ct())) {
                    Outcome outcome = readToEnd(pattern.steps().get(), in, v.ct().length);
                    judgeStream(v, where, in, outcome, failures);
                } catch (Exception | AssertionError e) {
                    failures.add(where + ": " + e);
                }
            }
        }
        assertTrue(run >= 33 * READ_PATTERNS.size(), "ran " + run);
        assertEquals(List.of(), failures, kind + ": " + failures.size() + " of " + run + " streaming runs failed");
    }

    /**
     * After the failure of an invalid vector, every read, skip and available throws again: a
     * caller that catches the exception and reads on gets neither a clean end nor more bytes.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void streamingReaderKeepsFailingAfterAnError(EngineKind kind) {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        int run = 0;
        for (Vector v : vectors) {
            if (v.valid() || v.has("InvalidKeySize")) {
                continue;
            }
            GcmStreams gcm = streams(v, engine, null);
            for (ReadPattern pattern : READ_PATTERNS) {
                run++;
                String where = v.id() + ", " + pattern.name();
                try (GcmInputStream in = pattern.opener().open(gcm, v.ct())) {
                    Outcome outcome = readToEnd(pattern.steps().get(), in, v.ct().length);
                    if (!(outcome.error() instanceof StreamAuthenticationException)) {
                        failures.add(where + ": did not fail (streamingReader tells more)");
                        continue;
                    }
                    for (Map.Entry<String, StreamCall> call : AFTER_FAILURE) {
                        try {
                            Object result = call.getValue().call(in);
                            failures.add(where + ": after the failure, " + call.getKey() + " returned " + result);
                        } catch (StreamAuthenticationException expected) {
                            // poisoned, as it must be
                        } catch (IOException | RuntimeException e) {
                            failures.add(where + ": after the failure, " + call.getKey() + " threw " + e
                                    + ", not StreamAuthenticationException");
                        }
                    }
                } catch (Exception | AssertionError e) {
                    failures.add(where + ": " + e);
                }
            }
        }
        assertTrue(run >= 23 * READ_PATTERNS.size(), "ran " + run);
        assertEquals(List.of(), failures, kind + ": " + failures.size() + " calls after a failure did not throw it again");
    }

    /** What a reader released before the end or the error; {@code problem} if it misbehaved. */
    record Outcome(byte[] output, IOException error, String problem) {}

    private static Outcome readToEnd(ReadStep step, GcmInputStream in, long limit) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int zeros = 0;
        try {
            while (true) {
                int n = step.read(in, out);
                if (n < 0) {
                    return new Outcome(out.toByteArray(), null, null);
                }
                zeros = n == 0 ? zeros + 1 : 0;
                if (zeros > 1000) {
                    return new Outcome(out.toByteArray(), null, "read returned 0 a thousand times in a row");
                }
                if (out.size() > limit) {
                    return new Outcome(out.toByteArray(), null, "released " + out.size()
                            + " bytes, more than the ciphertext's " + limit);
                }
            }
        } catch (IOException e) {
            return new Outcome(out.toByteArray(), e, null);
        }
    }

    private static void judgeStream(Vector v, String where, GcmInputStream in, Outcome o, List<String> failures)
            throws IOException {
        if (o.problem() != null) {
            failures.add(where + ": " + o.problem());
            return;
        }
        if (v.valid()) {
            if (o.error() != null) {
                failures.add(where + ": failed after " + o.output().length + " bytes: " + o.error());
                return;
            }
            String bad = checkMessage(v, o.output());
            if (bad != null) {
                failures.add(where + ": " + bad);
            }
            if (in.read() != -1 || in.read(new byte[100]) != -1 || in.plaintextRead() != v.msgLength()) {
                failures.add(where + ": after the end, read did not stay at -1 or plaintextRead() is "
                        + in.plaintextRead());
            }
            return;
        }
        if (o.error() == null) {
            failures.add(where + ": invalid, but read as a clean message of " + o.output().length + " bytes");
            return;
        }
        if (!(o.error() instanceof StreamAuthenticationException failure)) {
            failures.add(where + ": threw " + o.error() + ", not StreamAuthenticationException");
            return;
        }
        for (String bad : new String[] {checkPrefix(v, o.output()), checkChunk(v, failure)}) {
            if (bad != null) {
                failures.add(where + ": " + bad);
            }
        }
    }

    /**
     * Null if {@code failure.chunk()} fits the vector: -1 for a header failure; a chunk of the
     * message for a modified or reordered chunk; either for a wrong length (truncated or
     * extended), which may show as -1 (a length failure) or as the chunk that fails.
     */
    private static String checkChunk(Vector v, StreamAuthenticationException failure) {
        long chunk = failure.chunk();
        long lastChunk = Math.max(0, v.ct().length - HEADER) / SEALED;
        if (v.has("HeaderFailure")) {
            return chunk == -1 ? null : "chunk() is " + chunk + ", not -1, for a header failure";
        }
        if (chunk < -1 || chunk > lastChunk) {
            return "chunk() is " + chunk + ", outside -1.." + lastChunk;
        }
        if (chunk == -1 && (v.has("ModifiedCiphertext") || v.has("ChunkReordering"))) {
            return "chunk() is -1, but a chunk failed and must be named";
        }
        return null;
    }

    // ---- random access ----

    /** Opens the wrapped channel for one random-access run. */
    @FunctionalInterface
    interface ChannelOpener {
        SeekableByteChannel open() throws IOException;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void randomAccessChannel(EngineKind kind) throws IOException {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        int run = 0;
        for (Vector v : vectors) {
            if (v.has("InvalidKeySize")) {
                continue; // refused by the builder: streamingReader checks that
            }
            GcmStreams gcm = streams(v, engine, null);
            Path file = dir.resolve("tc" + v.tcId() + ".enc");
            Files.write(file, v.ct());
            List<Map.Entry<String, ChannelOpener>> channels = List.of(
                    Map.entry("FileChannel", () -> FileChannel.open(file, StandardOpenOption.READ)),
                    Map.entry("non-file channel of 1000-byte reads", () -> new MemorySeekableChannel(v.ct(), 1000)));
            for (Map.Entry<String, ChannelOpener> channel : channels) {
                run++;
                String where = v.id() + ", " + channel.getKey();
                try {
                    checkRandomAccess(v, gcm, channel.getValue(), where, failures);
                } catch (Exception | AssertionError e) {
                    failures.add(where + ": " + e);
                }
            }
        }
        assertTrue(run >= 66, "ran " + run);
        assertEquals(List.of(), failures, kind + ": " + failures.size() + " of " + run + " random-access runs failed");
    }

    private static void checkRandomAccess(Vector v, GcmStreams gcm, ChannelOpener opener, String where,
            List<String> failures) throws IOException {
        if (v.has("HeaderFailure")) {
            try (SeekableByteChannel raw = opener.open()) {
                try {
                    gcm.open(raw).close();
                    failures.add(where + ": opened a channel despite a header failure");
                } catch (StreamAuthenticationException expected) {
                    if (expected.chunk() != -1) {
                        failures.add(where + ": chunk() is " + expected.chunk() + ", not -1, for a header failure");
                    }
                    if (raw.isOpen()) { // closeUnderlying is on: open() owns the channel it rejects
                        failures.add(where + ": the rejected channel was left open");
                    }
                }
            }
            return;
        }

        // size() first, on a fresh channel: it authenticates the final chunk.
        try (GcmSeekableChannel ch = gcm.open(opener.open())) {
            try {
                long size = ch.size();
                if (v.valid() && size != v.msgLength()) {
                    failures.add(where + ": size() " + size + ", expected " + v.msgLength());
                } else if (!v.valid() && !v.has("ValidFinalChunk")) {
                    failures.add(where + ": size() gave " + size + ", but the final chunk is not authentic");
                }
            } catch (StreamAuthenticationException e) {
                if (v.valid()) {
                    failures.add(where + ": size() failed: " + e);
                } else {
                    try {
                        failures.add(where + ": size() failed once, then gave " + ch.size());
                    } catch (StreamAuthenticationException again) {
                        // it must keep failing
                    }
                }
            }
        }

        // Sequential reads of the whole message, alternating buffer kinds and sizes.
        try (GcmSeekableChannel ch = gcm.open(opener.open())) {
            Outcome o = readChannel(ch, v.ct().length);
            if (o.problem() != null) {
                failures.add(where + ": sequential: " + o.problem());
            } else if (v.valid()) {
                if (o.error() != null) {
                    failures.add(where + ": sequential: failed after " + o.output().length + " bytes: " + o.error());
                } else {
                    String bad = checkMessage(v, o.output());
                    if (bad != null) {
                        failures.add(where + ": sequential: " + bad);
                    }
                    if (ch.read(ByteBuffer.allocate(1)) != -1 || ch.position() != v.msgLength()) {
                        failures.add(where + ": sequential: after the end, read is not -1 or position is "
                                + ch.position());
                    }
                }
            } else if (o.error() == null) {
                failures.add(where + ": sequential: invalid, but read as a clean message of " + o.output().length
                        + " bytes");
            } else if (!(o.error() instanceof StreamAuthenticationException)) {
                failures.add(where + ": sequential: threw " + o.error() + ", not StreamAuthenticationException");
            } else {
                String bad = checkPrefix(v, o.output());
                if (bad != null) {
                    failures.add(where + ": sequential: " + bad);
                }
                try {
                    int n = ch.read(ByteBuffer.allocate(CHUNK));
                    failures.add(where + ": sequential: after the failure, the next read returned " + n);
                } catch (StreamAuthenticationException again) {
                    // the same chunk fails again
                }
            }
        }

        // Positioned reads.
        try (GcmSeekableChannel ch = gcm.open(opener.open())) {
            if (v.valid()) {
                int length = (int) v.msgLength();
                byte[] all = new byte[length];
                ch.readFully(0, all, 0, length);
                if (!Arrays.equals(v.expected(), all)) {
                    failures.add(where + ": readFully(0, " + length + ") gave other bytes");
                }
                if (ch.read(ByteBuffer.allocate(1), v.msgLength()) != -1) {
                    failures.add(where + ": read at the end is not -1");
                }
                if (length > 0) {
                    byte[] last = new byte[1];
                    ch.readFully(length - 1, last, 0, 1);
                    if (last[0] != v.expected()[length - 1]) {
                        failures.add(where + ": the last byte differs");
                    }
                }
                return;
            }
            // Chunks of the authentic prefix may be read; past it, the read must fail.
            int prefix = (int) v.prefixLength();
            byte[] part = new byte[prefix];
            try {
                ch.readFully(0, part, 0, prefix);
                if (!Arrays.equals(v.expected(), part)) {
                    failures.add(where + ": readFully of the authentic prefix gave other bytes");
                }
            } catch (StreamAuthenticationException allowed) {
                // a reader may refuse even the prefix (for example when the length is impossible)
            }
            byte[] beyond = new byte[prefix + CHUNK + 1];
            Arrays.fill(beyond, UNWRITTEN);
            try {
                ch.readFully(0, beyond, 0, beyond.length);
                failures.add(where + ": readFully read " + beyond.length + " bytes, past the authentic prefix of "
                        + prefix);
            } catch (StreamAuthenticationException expected) {
                for (int i = prefix; i < beyond.length; i++) {
                    if (beyond[i] != UNWRITTEN) {
                        failures.add(where + ": a failed readFully wrote byte " + i + ", past the authentic prefix");
                        break;
                    }
                }
            }
        }
    }

    private static Outcome readChannel(GcmSeekableChannel ch, long limit) {
        ByteBuffer[] buffers = {
            ByteBuffer.allocate(7000), ByteBuffer.allocateDirect(CHUNK), ByteBuffer.allocate(1),
            ByteBuffer.allocateDirect(40_000),
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int zeros = 0;
        try {
            for (int i = 0; ; i++) {
                ByteBuffer buffer = buffers[i % buffers.length].clear();
                int n = ch.read(buffer);
                if (n < 0) {
                    return new Outcome(out.toByteArray(), null, null);
                }
                buffer.flip();
                byte[] part = new byte[buffer.remaining()];
                buffer.get(part);
                out.writeBytes(part);
                zeros = n == 0 ? zeros + 1 : 0;
                if (zeros > 1000) {
                    return new Outcome(out.toByteArray(), null, "read returned 0 a thousand times in a row");
                }
                if (out.size() > limit) {
                    return new Outcome(out.toByteArray(), null, "released " + out.size() + " bytes, more than "
                            + limit);
                }
            }
        } catch (IOException e) {
            return new Outcome(out.toByteArray(), e, null);
        }
    }

    // ---- raw mode ----

    /** What a raw-mode decryption gave: the message if {@code complete}, else the authentic prefix. */
    record Raw(byte[] plaintext, boolean complete) {}

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void rawMode(EngineKind kind) {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        int run = 0;
        for (Vector v : vectors) {
            if (v.has("HeaderFailure")) {
                continue; // the doc: raw mode does not apply
            }
            run++;
            byte[] body = v.body();
            List<Map.Entry<String, RawOpener>> openers = List.of(
                    Map.entry("arrays, one chunk per openChunks", (gcm, problems) ->
                            rawOpenArrays(gcm, v.baseNonce(), body, 1, problems)),
                    Map.entry("arrays at offsets, up to 4 chunks per openChunks", (gcm, problems) ->
                            rawOpenArrays(gcm, v.baseNonce(), body, 4, problems)),
                    Map.entry("direct ByteBuffers, every whole chunk in one openChunks", (gcm, problems) ->
                            rawOpenBuffers(gcm, v.baseNonce(), ByteBuffer.allocateDirect(body.length).put(body).flip(),
                                    ByteBuffer.allocateDirect(body.length), problems)),
                    Map.entry("heap ByteBuffer slice into a direct one", (gcm, problems) -> {
                        ByteBuffer heap = ByteBuffer.allocate(body.length + 9).position(9).slice().put(body).flip();
                        return rawOpenBuffers(gcm, v.baseNonce(), heap, ByteBuffer.allocateDirect(body.length), problems);
                    }));
            for (Map.Entry<String, RawOpener> opener : openers) {
                String where = v.id() + ", raw open, " + opener.getKey();
                List<String> problems = new ArrayList<>();
                try (AeadCipher gcm = engine.newAesGcm(v.aeadKey())) {
                    Raw raw = opener.getValue().open(gcm, problems);
                    if (v.valid() && !raw.complete()) {
                        problems.add("a valid vector did not decrypt (" + raw.plaintext().length + " bytes of "
                                + v.msgLength() + " before the failure)");
                    } else if (v.valid()) {
                        String bad = checkMessage(v, raw.plaintext());
                        if (bad != null) {
                            problems.add(bad);
                        }
                    } else if (raw.complete()) {
                        problems.add("an invalid vector decrypted to " + raw.plaintext().length + " bytes");
                    } else if (raw.plaintext().length != v.prefixLength()
                            || !Arrays.equals(v.expected(), raw.plaintext())) {
                        // Raw decryption opens every whole chunk in turn: it must reach exactly
                        // the authentic prefix the vector describes.
                        problems.add("authenticated " + raw.plaintext().length + " bytes, the vector's prefix is "
                                + v.prefixLength() + " bytes" + (raw.plaintext().length == v.prefixLength()
                                ? " (the bytes differ)" : ""));
                    }
                } catch (Exception | AssertionError e) {
                    problems.add(e.toString());
                }
                problems.forEach(p -> failures.add(where + ": " + p));
            }
            if (v.valid()) {
                for (int batch : new int[] {1, Integer.MAX_VALUE}) {
                    String where = v.id() + ", raw seal, " + (batch == 1 ? "one chunk" : "every chunk")
                            + " per sealChunks";
                    // A fresh cipher per pass: JCE refuses to seal twice in a row with one nonce.
                    try (AeadCipher gcm = engine.newAesGcm(v.aeadKey())) {
                        byte[] sealed = rawSeal(gcm, v.baseNonce(), v.expected(), batch);
                        if (!Arrays.equals(body, sealed)) {
                            failures.add(where + ": " + difference(sealed, body) + " against ct without its header");
                        }
                    } catch (Exception | AssertionError e) {
                        failures.add(where + ": " + e);
                    }
                }
            }
        }
        assertTrue(run >= 25, "ran " + run);
        assertEquals(List.of(), failures, kind + ": " + failures.size() + " raw-mode checks failed");
    }

    /** A raw-mode decryption of a header-less ciphertext; adds contract violations to {@code problems}. */
    @FunctionalInterface
    interface RawOpener {
        Raw open(AeadCipher gcm, List<String> problems) throws IOException;
    }

    /**
     * Opens every whole sealed chunk in turn ({@code openChunks}, up to {@code batch} a call),
     * then the rest as the final chunk ({@code open}); a message whose rest is empty lacks its
     * final chunk. The body sits at offset 3 and the plaintext at offset 5 of their arrays.
     */
    private static Raw rawOpenArrays(AeadCipher gcm, byte[] baseNonce, byte[] body, int batch, List<String> problems) {
        int inOff = 3;
        int outOff = 5;
        byte[] in = new byte[inOff + body.length];
        System.arraycopy(body, 0, in, inOff, body.length);
        byte[] out = new byte[outOff + body.length];
        Arrays.fill(out, UNWRITTEN);
        int pos = 0;
        int done = 0;
        long chunk = 0;
        while (body.length - pos >= SEALED) {
            int count = Math.min(batch, (body.length - pos) / SEALED);
            int opened = gcm.openChunks(baseNonce, chunk, in, inOff + pos, count, out, outOff + done);
            if (opened < 0 || opened > count) {
                problems.add("openChunks of " + count + " returned " + opened);
                return new Raw(new byte[0], false);
            }
            done += opened * CHUNK;
            if (opened < count) {
                if (!allZero(out, outOff + done, CHUNK)) {
                    problems.add("openChunks did not zero the output of failed chunk " + (chunk + opened));
                }
                return new Raw(Arrays.copyOfRange(out, outOff, outOff + done), false);
            }
            pos += count * SEALED;
            chunk += count;
        }
        int rest = body.length - pos;
        try {
            int n = gcm.open(nonce(baseNonce, chunk), null, in, inOff + pos, rest, out, outOff + done);
            if (n != rest - TAG) {
                problems.add("open of " + rest + " bytes returned " + n);
            }
            return new Raw(Arrays.copyOfRange(out, outOff, outOff + done + n), true);
        } catch (AEADBadTagException e) {
            for (int i = outOff + done; i < outOff + done + Math.max(0, rest - TAG); i++) {
                if (out[i] != UNWRITTEN && out[i] != 0) {
                    problems.add("a failed open left bytes in the output");
                    break;
                }
            }
            return new Raw(Arrays.copyOfRange(out, outOff, outOff + done), false);
        }
    }

    /** As {@link #rawOpenArrays} with the ByteBuffer methods, every whole chunk in one call. */
    private static Raw rawOpenBuffers(AeadCipher gcm, byte[] baseNonce, ByteBuffer in, ByteBuffer out,
            List<String> problems) {
        int whole = in.remaining() / SEALED;
        long chunk = 0;
        if (whole > 0) {
            ByteBuffer chunks = in.duplicate().limit(in.position() + whole * SEALED);
            int inStart = chunks.position();
            int outStart = out.position();
            int opened = gcm.openChunks(baseNonce, 0, chunks, out);
            if (opened < 0 || opened > whole) {
                problems.add("openChunks(ByteBuffer) of " + whole + " returned " + opened);
                return new Raw(new byte[0], false);
            }
            if (chunks.position() - inStart != opened * SEALED || out.position() - outStart != opened * CHUNK) {
                problems.add("openChunks(ByteBuffer) returned " + opened + " but advanced the input by "
                        + (chunks.position() - inStart) + " and the output by " + (out.position() - outStart));
                return new Raw(new byte[0], false);
            }
            if (opened < whole) {
                for (int i = out.position(); i < out.position() + CHUNK; i++) {
                    if (out.get(i) != 0) {
                        problems.add("openChunks(ByteBuffer) did not zero the output of failed chunk " + opened);
                        break;
                    }
                }
                return new Raw(contents(out), false);
            }
            in.position(chunks.position());
            chunk = whole;
        }
        int rest = in.remaining();
        try {
            int n = gcm.open(nonce(baseNonce, chunk), null, in, out);
            if (n != rest - TAG || in.hasRemaining()) {
                problems.add("open(ByteBuffer) of " + rest + " bytes returned " + n + " and left " + in.remaining());
            }
            return new Raw(contents(out), true);
        } catch (AEADBadTagException e) {
            return new Raw(contents(out), false);
        }
    }

    /** Raw-mode encryption: sealChunks for the whole chunks, {@code batch} per call, then seal for the final one. */
    private static byte[] rawSeal(AeadCipher gcm, byte[] baseNonce, byte[] message, int batch) {
        int whole = message.length / CHUNK;
        int tail = message.length % CHUNK;
        byte[] out = new byte[whole * SEALED + tail + TAG];
        for (int i = 0; i < whole; ) {
            int count = Math.min(batch, whole - i);
            gcm.sealChunks(baseNonce, i, message, i * CHUNK, count, out, i * SEALED);
            i += count;
        }
        int n = gcm.seal(nonce(baseNonce, whole), null, message, whole * CHUNK, tail, out, whole * SEALED);
        if (n != tail + TAG) {
            throw new AssertionError("seal of " + tail + " bytes returned " + n);
        }
        return out;
    }

    // ---- encryption with the vector's salt ----

    /** Writes a message into an output stream in some pattern. */
    @FunctionalInterface
    interface WritePattern {
        void write(GcmOutputStream out, byte[] message) throws IOException;
    }

    private static final List<Map.Entry<String, WritePattern>> WRITE_PATTERNS = List.of(
            Map.entry("one write", (out, m) -> out.write(m)),
            Map.entry("write(int) each byte", (out, m) -> {
                for (byte b : m) {
                    out.write(b);
                }
            }),
            Map.entry("random pieces, some from direct buffers", (out, m) -> {
                Random random = new Random(3);
                for (int done = 0; done < m.length; ) {
                    int n = Math.min(m.length - done, random.nextInt(70_000));
                    if (random.nextBoolean()) {
                        out.write(m, done, n);
                    } else {
                        out.write(ByteBuffer.allocateDirect(n).put(m, done, n).flip());
                    }
                    done += n;
                }
            }));

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void encryptionWithTheVectorsSaltReproducesCt(EngineKind kind) {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        int run = 0;
        for (Vector v : vectors) {
            if (!v.valid()) {
                continue;
            }
            GcmStreams gcm = streams(v, engine, v.salt());
            for (Map.Entry<String, WritePattern> pattern : WRITE_PATTERNS) {
                run++;
                String where = v.id() + ", " + pattern.getKey();
                try {
                    ByteArrayOutputStream sink = new ByteArrayOutputStream();
                    try (GcmOutputStream out = gcm.encrypt(sink)) {
                        pattern.getValue().write(out, v.expected());
                    }
                    byte[] got = sink.toByteArray();
                    if (!Arrays.equals(v.ct(), got)) {
                        failures.add(where + ": " + difference(got, v.ct()));
                    }
                } catch (Exception | AssertionError e) {
                    failures.add(where + ": " + e);
                }
            }
        }
        assertTrue(run >= 10 * WRITE_PATTERNS.size(), "ran " + run);
        assertEquals(List.of(), failures, kind + ": " + failures.size() + " of " + run + " encryptions differ");
    }

    // ---- helpers ----

    private static GcmStreams streams(Vector v, CryptoEngine engine, byte[] salt) {
        GcmStreams.Builder builder = GcmStreams.builder().key(v.key()).context(v.ctx()).engine(engine);
        if (salt != null) {
            builder.fixedSaltForTests(salt);
        }
        return builder.build();
    }

    /** Null if {@code output} is the vector's message (msgLength bytes, SHA-512 msgSha512). */
    private static String checkMessage(Vector v, byte[] output) {
        if (output.length != v.msgLength()) {
            return output.length + " bytes, expected msgLength " + v.msgLength();
        }
        if (!Arrays.equals(v.msgSha512(), sha512(output))) {
            return "the " + output.length + " bytes do not hash to msgSha512";
        }
        return null;
    }

    /** Null if {@code output} is a prefix of the vector's authentic prefix. */
    private static String checkPrefix(Vector v, byte[] output) {
        if (output.length > v.prefixLength()) {
            return "released " + output.length + " bytes, past the authentic prefix of " + v.prefixLength();
        }
        if (!Arrays.equals(output, Arrays.copyOf(v.expected(), output.length))) {
            return "released " + output.length + " bytes that differ from the authentic prefix";
        }
        return null;
    }

    /** The independent decryption's answer: the message, or the authentic prefix. */
    record Reference(byte[] plaintext, boolean complete) {}

    /**
     * Decrypts a header-less body with {@code javax.crypto} alone, as the specification reads:
     * each whole sealed chunk i with nonce baseNonce XOR i, then the rest (16..16399 bytes) as
     * the final chunk; stops at the first chunk that fails.
     */
    static Reference referenceOpen(byte[] key, byte[] baseNonce, byte[] body) throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        SecretKeySpec spec = new SecretKeySpec(key, "AES");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int pos = 0;
        long chunk = 0;
        while (body.length - pos >= SEALED) {
            byte[] plain = referenceChunk(cipher, spec, nonce(baseNonce, chunk), body, pos, SEALED);
            if (plain == null) {
                return new Reference(out.toByteArray(), false);
            }
            out.writeBytes(plain);
            pos += SEALED;
            chunk++;
        }
        int rest = body.length - pos;
        byte[] plain = rest < TAG ? null : referenceChunk(cipher, spec, nonce(baseNonce, chunk), body, pos, rest);
        if (plain == null) {
            return new Reference(out.toByteArray(), false);
        }
        out.writeBytes(plain);
        return new Reference(out.toByteArray(), true);
    }

    private static byte[] referenceChunk(Cipher cipher, SecretKeySpec key, byte[] nonce, byte[] in, int off, int len)
            throws GeneralSecurityException {
        cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG * 8, nonce));
        try {
            return cipher.doFinal(in, off, len);
        } catch (AEADBadTagException e) {
            return null;
        }
    }

    /** The specification's chunk nonce: the base nonce XOR the index as a 96-bit big-endian integer. */
    static byte[] nonce(byte[] baseNonce, long index) {
        byte[] nonce = baseNonce.clone();
        byte[] be = ByteBuffer.allocate(Long.BYTES).putLong(index).array();
        for (int i = 0; i < Long.BYTES; i++) {
            nonce[nonce.length - Long.BYTES + i] ^= be[i];
        }
        return nonce;
    }

    /** Decompresses one whole zlib stream (the vectors' ct), refusing a truncated one or trailing bytes. */
    static byte[] inflate(byte[] zlib) throws DataFormatException {
        Inflater inflater = new Inflater();
        try {
            inflater.setInput(zlib);
            ByteArrayOutputStream out = new ByteArrayOutputStream(zlib.length * 4);
            byte[] buffer = new byte[1 << 16];
            while (!inflater.finished()) {
                int n = inflater.inflate(buffer);
                if (n == 0 && !inflater.finished() && (inflater.needsInput() || inflater.needsDictionary())) {
                    throw new DataFormatException("truncated zlib stream");
                }
                out.write(buffer, 0, n);
            }
            if (inflater.getRemaining() != 0) {
                throw new DataFormatException(inflater.getRemaining() + " bytes after the zlib stream");
            }
            return out.toByteArray();
        } finally {
            inflater.end();
        }
    }

    static byte[] sha512(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-512").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean allZero(byte[] b, int off, int len) {
        for (int i = off; i < off + len; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    /** The bytes written to {@code out} so far (from 0 to its position). */
    private static byte[] contents(ByteBuffer out) {
        byte[] b = new byte[out.position()];
        out.duplicate().flip().get(b);
        return b;
    }

    private static String difference(byte[] got, byte[] expected) {
        int i = Arrays.mismatch(got, expected);
        return "got " + got.length + " bytes, expected " + expected.length + "; first difference at byte " + i;
    }
}
