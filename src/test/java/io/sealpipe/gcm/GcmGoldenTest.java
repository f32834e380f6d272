package io.sealpipe.gcm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sealpipe.MemorySeekableChannel;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Frozen chunked AES-GCM ciphertexts in {@code src/test/resources/gcm} (listed in
 * {@code golden.json}: Cobblestone-256 of 0, 1, 16384 and 40000 bytes, the last with a context,
 * and Cobblestone-128 of 20000 bytes with a context), so a format change cannot slip by. On
 * every engine each must still decrypt, streaming and through the random-access channel, be
 * rejected under another context, and come out again, byte for byte, when its plaintext is
 * encrypted with its salt. The files are only read here, never written.
 */
class GcmGoldenTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final int CHUNK = Cobblestone.CHUNK_SIZE;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void goldenCiphertextsStillDecrypt(EngineKind kind) throws IOException {
        CryptoEngine engine = TestEngines.engine(kind);
        List<String> failures = new ArrayList<>();
        int count = 0;
        for (JsonNode v : load("golden.json").get("vectors")) {
            count++;
            String where = kind + " " + v.get("file").asText();
            try {
                check(v, engine, where, failures);
            } catch (Exception | AssertionError e) {
                failures.add(where + ": " + e);
            }
        }
        assertEquals(5, count, "vectors in golden.json");
        assertEquals(List.of(), failures, failures.size() + " golden checks failed");
    }

    private void check(JsonNode v, CryptoEngine engine, String where, List<String> failures) throws IOException {
        byte[] sealed = resource(v.get("file").asText());
        byte[] key = HEX.parseHex(v.get("key").asText());
        byte[] context = HEX.parseHex(v.get("context").asText());
        int length = v.get("plaintextLength").asInt();
        byte[] plain = new byte[length];
        new Random(v.get("plaintextSeed").asLong()).nextBytes(plain);

        // The files and the plaintext generator are what the index says.
        if (!v.get("ciphertextSha256").asText().equals(HEX.formatHex(sha256(sealed)))) {
            failures.add(where + ": the file's SHA-256 differs from golden.json: was it regenerated?");
        }
        if (!v.get("plaintextSha256").asText().equals(HEX.formatHex(sha256(plain)))) {
            failures.add(where + ": the regenerated plaintext's SHA-256 differs from golden.json");
            return;
        }
        long expectedLength = Cobblestone.HEADER_LENGTH + length + (length / CHUNK + 1L) * Cobblestone.TAG_LENGTH;
        if (sealed.length != expectedLength) {
            failures.add(where + ": " + sealed.length + " bytes, the format makes " + expectedLength);
        }

        GcmStreams gcm = GcmStreams.builder().key(key).context(context).engine(engine).build();
        if (!gcm.formatName().equals(v.get("format").asText())) {
            failures.add(where + ": format " + gcm.formatName() + ", golden.json says " + v.get("format").asText());
        }

        // Streaming, in one go and from a source giving one byte a call.
        try (InputStream in = gcm.decrypt(new ByteArrayInputStream(sealed))) {
            expectEqual(failures, where + ": streaming", plain, in.readAllBytes());
        }
        try (InputStream in = gcm.decrypt(new GcmRoundTripTest.OneByteAtATime(sealed))) {
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] b = new byte[1000];
            for (int n; (n = in.read(b, 0, b.length)) >= 0; ) {
                got.write(b, 0, n);
            }
            expectEqual(failures, where + ": streaming from a one-byte-a-call source", plain, got.toByteArray());
        }

        // Random access over a file and over a non-file channel.
        Path file = dir.resolve(v.get("file").asText());
        Files.write(file, sealed);
        List<SeekableByteChannel> channels = List.of(FileChannel.open(file, StandardOpenOption.READ),
                new MemorySeekableChannel(sealed, 777));
        for (SeekableByteChannel channel : channels) {
            String at = where + ": random access over " + channel.getClass().getSimpleName();
            try (GcmSeekableChannel ch = gcm.open(channel)) {
                if (ch.size() != length) {
                    failures.add(at + ": size() " + ch.size() + ", expected " + length);
                }
                byte[] all = new byte[length];
                ch.readFully(0, all, 0, length);
                expectEqual(failures, at + ": readFully", plain, all);
                // Around chunk boundaries and at the end.
                for (long position : new long[] {CHUNK - 1, CHUNK, CHUNK + 1, 2L * CHUNK + 5, length - 1}) {
                    if (position < 0 || position >= length) {
                        continue;
                    }
                    int n = (int) Math.min(100, length - position);
                    byte[] part = new byte[n];
                    ch.readFully(position, part, 0, n);
                    expectEqual(failures, at + ": " + n + " bytes at " + position,
                            Arrays.copyOfRange(plain, (int) position, (int) position + n), part);
                }
                if (ch.read(ByteBuffer.allocate(1), length) != -1) {
                    failures.add(at + ": a read at the end did not return -1");
                }
            }
        }

        // Another context fails the key commitment before any chunk.
        byte[] otherContext = context.length == 0 ? new byte[] {'x'} : new byte[0];
        GcmStreams other = GcmStreams.builder().key(key).context(otherContext).engine(engine).build();
        try (InputStream in = other.decrypt(new ByteArrayInputStream(sealed))) {
            byte[] got = in.readAllBytes();
            failures.add(where + ": decrypted under another context to " + got.length + " bytes");
        } catch (StreamAuthenticationException expected) {
            if (expected.chunk() != -1) {
                failures.add(where + ": another context failed at chunk " + expected.chunk() + ", not the header");
            }
        }

        // Encrypting the plaintext again with the file's salt gives the file.
        GcmStreams sameSalt = GcmStreams.builder().key(key).context(context).engine(engine)
                .fixedSaltForTests(Arrays.copyOf(sealed, Cobblestone.SALT_LENGTH)).build();
        ByteArrayOutputStream again = new ByteArrayOutputStream();
        try (OutputStream out = sameSalt.encrypt(again)) {
            out.write(plain);
        }
        expectEqual(failures, where + ": encrypted again with its salt", sealed, again.toByteArray());
    }

    private static void expectEqual(List<String> failures, String where, byte[] expected, byte[] got) {
        if (!Arrays.equals(expected, got)) {
            failures.add(where + ": " + got.length + " bytes, expected " + expected.length + ", first difference at "
                    + Arrays.mismatch(expected, got));
        }
    }

    private static JsonNode load(String name) throws IOException {
        return new ObjectMapper().readTree(resource(name));
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = GcmGoldenTest.class.getResourceAsStream("/gcm/" + name)) {
            if (in == null) {
                throw new IOException("missing test resource /gcm/" + name);
            }
            return in.readAllBytes();
        }
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
