package io.sealpipe.fuzz;

import static io.sealpipe.fuzz.GcmFuzzFixtures.CHUNK;
import static io.sealpipe.fuzz.GcmFuzzFixtures.HEADER;
import static io.sealpipe.fuzz.GcmFuzzFixtures.SEALED_CHUNK;

import io.sealpipe.fuzz.GcmFuzzFixtures.Op;
import io.sealpipe.snappy.SnappyStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;
import org.xerial.snappy.SnappyFramedOutputStream;

/**
 * The seed corpus of the fuzz tests, made here so that it can be read and made again: truncations,
 * extensions, bit flips, swapped, dropped and repeated chunks, empty and exactly-16-KiB messages,
 * and good and bad command lines. Jazzer runs the files of
 * {@code src/test/resources/io/sealpipe/fuzz/<Test>Inputs/<method>/} as regression tests in
 * {@code mvn test}, and starts fuzzing from them. {@link FuzzSeedsTest} checks the files are
 * what this class makes; after a change here, write them again with
 * {@code mvn -q test-compile exec:java -Dexec.mainClass=io.sealpipe.fuzz.FuzzSeeds
 * -Dexec.classpathScope=test}.
 */
public final class FuzzSeeds {
    private FuzzSeeds() {}

    /** Where the seeds live, relative to the project. */
    static final Path RESOURCES = Path.of("src/test/resources/io/sealpipe/fuzz");

    /** The golden messages by their index in golden.json. */
    static final int EMPTY = 0, ONE_BYTE = 1, SIXTEEN_KIB = 2, FORTY_K = 3, AES128_20K = 4;

    /** Every seed: the folder (test class and method) to its files' names and contents. */
    static Map<String, Map<String, byte[]>> all() throws IOException {
        Map<String, Map<String, byte[]>> all = new LinkedHashMap<>();
        all.put("GcmStreamFuzzTestInputs/decrypt", gcmStream());
        all.put("GcmChannelFuzzTestInputs/read", gcmChannel());
        all.put("SnappyFramingFuzzTestInputs/decompress", snappy());
        all.put("CliArgsFuzzTestInputs/run", cli());
        return all;
    }

    public static void main(String[] args) throws IOException {
        Path root = args.length > 0 ? Path.of(args[0]) : RESOURCES;
        for (Map.Entry<String, Map<String, byte[]>> folder : all().entrySet()) {
            Path dir = Files.createDirectories(root.resolve(folder.getKey()));
            for (Map.Entry<String, byte[]> seed : folder.getValue().entrySet()) {
                Files.write(dir.resolve(seed.getKey()), seed.getValue());
            }
        }
    }

    // ---- GCM: the tampering operations of GcmFuzzFixtures.tamper ----

    private static FuzzInput.Writer op(FuzzInput.Writer w, Op op) {
        return w.u8(op.ordinal());
    }

    private static FuzzInput.Writer truncate(FuzzInput.Writer w, int length) {
        return op(w, Op.TRUNCATE).u31(length);
    }

    private static FuzzInput.Writer flip(FuzzInput.Writer w, int bit) {
        return op(w, Op.FLIP_BIT).u31(bit);
    }

    /** Chunk indices as tamper reads them: 0 is the first chunk. */
    private static FuzzInput.Writer swap(FuzzInput.Writer w, int a, int b) {
        return op(w, Op.SWAP_CHUNKS).u8(a).u8(b);
    }

    private static FuzzInput.Writer append(FuzzInput.Writer w, byte[] tail) {
        return op(w, Op.APPEND).blob(tail);
    }

    private static FuzzInput.Writer duplicate(FuzzInput.Writer w, int chunk) {
        return op(w, Op.DUPLICATE_CHUNK).u8(chunk);
    }

    private static FuzzInput.Writer drop(FuzzInput.Writer w, int chunk) {
        return op(w, Op.DROP_CHUNK).u8(chunk);
    }

    private static FuzzInput.Writer splice(FuzzInput.Writer w, int chunk, int message, int theirChunk) {
        return op(w, Op.SPLICE_CHUNK).u8(chunk).u8(message).u8(theirChunk);
    }

    private static FuzzInput.Writer replace(FuzzInput.Writer w, byte[] bytes) {
        return op(w, Op.REPLACE).blob(bytes);
    }

    /** The stream target's fields before the tampering; {@code ops} is the count that follows. */
    private static FuzzInput.Writer stream(int message, int source, int feed, int readSize, int ops) {
        return new FuzzInput.Writer().u8(message).u8(0).u8(source).u16(feed).u16(readSize).u8(ops);
    }

    private static int sealedLength(int message) {
        return GcmFuzzFixtures.MESSAGES.get(message).sealed().length;
    }

    private static Map<String, byte[]> gcmStream() {
        Map<String, byte[]> s = new LinkedHashMap<>();
        s.put("intact-empty-one-byte-reads", stream(EMPTY, 0, 0, 0, 0).toByteArray());
        s.put("intact-1-byte", stream(ONE_BYTE, 0, 0, 1, 0).toByteArray());
        s.put("intact-16KiB-one-byte-reads", stream(SIXTEEN_KIB, 0, 0, 0, 0).toByteArray());
        s.put("intact-16KiB-heap-buffer", stream(SIXTEEN_KIB, 1, 0, CHUNK, 0).toByteArray());
        s.put("intact-40000-direct-buffer", stream(FORTY_K, 2, 0, 65535, 0).toByteArray());
        s.put("intact-40000-short-feed", stream(FORTY_K, 0, 1000, 4096, 0).toByteArray());
        s.put("intact-aes128-channel", stream(AES128_20K, 3, 100, 20000, 0).toByteArray());
        s.put("truncate-to-empty", truncate(stream(FORTY_K, 0, 0, 65535, 1), 0).toByteArray());
        s.put("truncate-in-header", truncate(stream(FORTY_K, 0, 0, 65535, 1), 30).toByteArray());
        s.put("truncate-after-header", truncate(stream(FORTY_K, 0, 0, 65535, 1), HEADER).toByteArray());
        s.put("truncate-at-chunk-boundary",
                truncate(stream(FORTY_K, 0, 0, 65535, 1), HEADER + SEALED_CHUNK).toByteArray());
        s.put("truncate-two-chunks-in-memory",
                truncate(stream(FORTY_K, 1, 0, 65535, 1), HEADER + 2 * SEALED_CHUNK).toByteArray());
        s.put("truncate-final-tag", truncate(stream(FORTY_K, 0, 0, 100, 1), sealedLength(FORTY_K) - 16).toByteArray());
        s.put("truncate-16KiB-last-byte",
                truncate(stream(SIXTEEN_KIB, 0, 0, 65535, 1), sealedLength(SIXTEEN_KIB) - 1).toByteArray());
        s.put("truncate-empty-message", truncate(stream(EMPTY, 2, 0, 10, 1), HEADER).toByteArray());
        s.put("extend-one-byte", append(stream(FORTY_K, 0, 0, 65535, 1), new byte[1]).toByteArray());
        s.put("extend-16-bytes", append(stream(SIXTEEN_KIB, 3, 0, 16384, 1), new byte[16]).toByteArray());
        s.put("extend-empty-by-a-chunk", append(stream(EMPTY, 0, 0, 65535, 1), new byte[SEALED_CHUNK]).toByteArray());
        s.put("flip-salt", flip(stream(FORTY_K, 0, 0, 65535, 1), 0).toByteArray());
        s.put("flip-commitment", flip(stream(FORTY_K, 0, 0, 65535, 1), 8 * 40).toByteArray());
        s.put("flip-chunk-1", flip(stream(FORTY_K, 0, 0, 65535, 1), 8 * (HEADER + SEALED_CHUNK + 100)).toByteArray());
        s.put("flip-chunk-1-large-reads",
                flip(stream(FORTY_K, 1, 0, 65535, 1), 8 * (HEADER + SEALED_CHUNK + 100)).toByteArray());
        s.put("flip-16KiB-last-tag-bit",
                flip(stream(SIXTEEN_KIB, 0, 0, 65535, 1), 8 * sealedLength(SIXTEEN_KIB) - 1).toByteArray());
        s.put("flip-empty-tag", flip(stream(EMPTY, 0, 0, 0, 1), 8 * (HEADER + 3)).toByteArray());
        s.put("swap-chunks-0-1", swap(stream(FORTY_K, 0, 0, 65535, 1), 0, 1).toByteArray());
        s.put("swap-chunks-0-2", swap(stream(FORTY_K, 2, 0, 65535, 1), 0, 2).toByteArray());
        s.put("duplicate-chunk-0", duplicate(stream(FORTY_K, 0, 0, 65535, 1), 0).toByteArray());
        s.put("drop-chunk-1", drop(stream(FORTY_K, 0, 0, 65535, 1), 1).toByteArray());
        s.put("drop-16KiB-final-chunk", drop(stream(SIXTEEN_KIB, 0, 0, 65535, 1), 1).toByteArray());
        s.put("splice-chunk-of-other-key", splice(stream(FORTY_K, 0, 0, 65535, 1), 0, AES128_20K, 0).toByteArray());
        s.put("splice-chunk-0-at-1", splice(stream(FORTY_K, 0, 0, 65535, 1), 1, FORTY_K, 0).toByteArray());
        s.put("replace-by-empty", replace(stream(FORTY_K, 0, 0, 65535, 1), new byte[0]).toByteArray());
        s.put("replace-by-16KiB-of-zeros", replace(stream(SIXTEEN_KIB, 0, 0, 65535, 1), new byte[CHUNK]).toByteArray());
        byte[] oneByte = GcmFuzzFixtures.MESSAGES.get(ONE_BYTE).sealed();
        s.put("truncate-then-restore", append(truncate(stream(ONE_BYTE, 0, 0, 1, 2), 40),
                Arrays.copyOfRange(oneByte, 40, oneByte.length)).toByteArray());
        return s;
    }

    private static final int HEAP = GcmChannelFuzzTest.HEAP, DIRECT = GcmChannelFuzzTest.DIRECT,
            ARRAY = GcmChannelFuzzTest.ARRAY, READ_FULLY = GcmChannelFuzzTest.READ_FULLY,
            SEQUENTIAL = GcmChannelFuzzTest.SEQUENTIAL, SIZE = GcmChannelFuzzTest.SIZE,
            NEGATIVE = GcmChannelFuzzTest.NEGATIVE;

    private static FuzzInput.Writer channel(int message, int feed, int ops) {
        return new FuzzInput.Writer().u8(message).u8(0).u16(feed).u8(ops);
    }

    private static FuzzInput.Writer read(FuzzInput.Writer w, int kind, int position, int length) {
        return w.u8(kind).u31(position).u16(length);
    }

    /** Reads of every kind over a 40000-byte message: inside, across chunks, at and past the end. */
    private static FuzzInput.Writer reads40000(FuzzInput.Writer w) {
        read(w, HEAP, 0, 100);
        read(w, DIRECT, CHUNK - 4, 10);
        read(w, ARRAY, 39990, 100);
        read(w, READ_FULLY, 0, 40000);
        read(w, SEQUENTIAL, 2 * CHUNK, 65535);
        read(w, SIZE, 0, 0);
        read(w, NEGATIVE, 0, 1);
        read(w, HEAP, 40000, 10);
        read(w, READ_FULLY, 39990, 100);
        return read(w, HEAP, CHUNK + 5, 0);
    }

    private static Map<String, byte[]> gcmChannel() {
        Map<String, byte[]> s = new LinkedHashMap<>();
        s.put("intact-40000-every-kind", reads40000(channel(FORTY_K, 0, 0)).toByteArray());
        s.put("intact-40000-short-feed", reads40000(channel(FORTY_K, 7, 0)).toByteArray());
        s.put("intact-empty", read(read(read(channel(EMPTY, 0, 0), SIZE, 0, 0), HEAP, 0, 1), READ_FULLY, 0, 0)
                .toByteArray());
        s.put("intact-16KiB", read(read(read(read(channel(SIXTEEN_KIB, 0, 0), HEAP, CHUNK - 1, 10), HEAP, CHUNK, 1),
                SIZE, 0, 0), ARRAY, 0, CHUNK).toByteArray());
        s.put("intact-aes128", reads40000(channel(AES128_20K, 0, 0)).toByteArray());
        s.put("truncate-at-chunk-boundary", reads40000(truncate(channel(FORTY_K, 0, 1), HEADER + SEALED_CHUNK))
                .toByteArray());
        s.put("truncate-final-tag", reads40000(truncate(channel(FORTY_K, 0, 1), sealedLength(FORTY_K) - 16))
                .toByteArray());
        s.put("truncate-in-header", reads40000(truncate(channel(FORTY_K, 0, 1), 30)).toByteArray());
        s.put("truncate-16KiB-last-byte", read(read(truncate(channel(SIXTEEN_KIB, 0, 1),
                sealedLength(SIXTEEN_KIB) - 1), HEAP, 0, 10), SIZE, 0, 0).toByteArray());
        s.put("extend-one-byte", reads40000(append(channel(FORTY_K, 0, 1), new byte[1])).toByteArray());
        s.put("extend-16KiB-by-a-chunk", read(read(append(channel(SIXTEEN_KIB, 0, 1), new byte[SEALED_CHUNK]),
                HEAP, 0, 10), SIZE, 0, 0).toByteArray());
        s.put("flip-salt", reads40000(flip(channel(FORTY_K, 0, 1), 0)).toByteArray());
        s.put("flip-chunk-1", reads40000(flip(channel(FORTY_K, 0, 1), 8 * (HEADER + SEALED_CHUNK + 100)))
                .toByteArray());
        s.put("flip-final-tag", reads40000(flip(channel(FORTY_K, 0, 1), 8 * sealedLength(FORTY_K) - 3)).toByteArray());
        s.put("swap-chunks-0-1", reads40000(swap(channel(FORTY_K, 0, 1), 0, 1)).toByteArray());
        s.put("duplicate-chunk-1", reads40000(duplicate(channel(FORTY_K, 0, 1), 1)).toByteArray());
        s.put("drop-chunk-0", reads40000(drop(channel(FORTY_K, 0, 1), 0)).toByteArray());
        s.put("splice-chunk-of-other-key", reads40000(splice(channel(FORTY_K, 0, 1), 1, AES128_20K, 0))
                .toByteArray());
        s.put("replace-by-16KiB-of-zeros", read(replace(channel(SIXTEEN_KIB, 0, 1), new byte[CHUNK]), HEAP, 0, 10)
                .toByteArray());
        return s;
    }

    // ---- Snappy framing ----

    private static FuzzInput.Writer snappy(int parallelism, int readSize) {
        return new FuzzInput.Writer().u8(parallelism - 1).u16(readSize);
    }

    private static byte[] compress(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (OutputStream z = SnappyStreams.builder().build().compress(out)) {
            z.write(data);
        }
        return out.toByteArray();
    }

    private static byte[] chunk(int type, byte[] body) {
        byte[] c = new byte[4 + body.length];
        c[0] = (byte) type;
        c[1] = (byte) body.length;
        c[2] = (byte) (body.length >>> 8);
        c[3] = (byte) (body.length >>> 16);
        System.arraycopy(body, 0, c, 4, body.length);
        return c;
    }

    /** An uncompressed data frame of {@code data}, with its masked CRC-32C. */
    private static byte[] uncompressedFrame(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        int c = (int) crc.getValue();
        int masked = ((c >>> 15) | (c << 17)) + 0xa282ead8;
        byte[] body = new byte[4 + data.length];
        body[0] = (byte) masked;
        body[1] = (byte) (masked >>> 8);
        body[2] = (byte) (masked >>> 16);
        body[3] = (byte) (masked >>> 24);
        System.arraycopy(data, 0, body, 4, data.length);
        return chunk(0x01, body);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static Map<String, byte[]> snappy() throws IOException {
        byte[] text = "sealpipe compresses, then encrypts. ".repeat(1821).getBytes(StandardCharsets.US_ASCII);
        text = Arrays.copyOf(text, 65537); // one full frame and one byte
        byte[] noise = new byte[20000];
        new Random(7).nextBytes(noise);
        byte[] identifier = {(byte) 0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y'};
        byte[] textStream = compress(text);
        byte[] noiseStream = compress(noise);
        ByteArrayOutputStream theirs = new ByteArrayOutputStream();
        try (OutputStream z = new SnappyFramedOutputStream(theirs)) {
            z.write(text, 0, 5000);
        }

        Map<String, byte[]> s = new LinkedHashMap<>();
        s.put("empty-input", snappy(1, 100).toByteArray());
        s.put("identifier-only", snappy(1, 100).bytes(identifier).toByteArray());
        s.put("empty-plaintext", snappy(1, 100).bytes(compress(new byte[0])).toByteArray());
        s.put("hello", snappy(1, 0).bytes(compress("hello".getBytes(StandardCharsets.US_ASCII))).toByteArray());
        s.put("text-64KiB-and-1", snappy(1, 65535).bytes(textStream).toByteArray());
        s.put("text-64KiB-and-1-parallel", snappy(2, 4096).bytes(textStream).toByteArray());
        s.put("noise-uncompressed-frames", snappy(1, 65535).bytes(noiseStream).toByteArray());
        s.put("snappy-java-stream", snappy(1, 1000).bytes(theirs.toByteArray()).toByteArray());
        s.put("concatenated-streams", snappy(1, 1000).bytes(concat(textStream, noiseStream)).toByteArray());
        s.put("truncated-in-chunk-header", snappy(1, 1000).bytes(Arrays.copyOf(textStream, 12)).toByteArray());
        s.put("truncated-in-frame", snappy(1, 1000).bytes(Arrays.copyOf(textStream, textStream.length - 1))
                .toByteArray());
        byte[] badCrc = textStream.clone();
        badCrc[14] ^= 1;
        s.put("flipped-crc", snappy(1, 1000).bytes(badCrc).toByteArray());
        byte[] badData = textStream.clone();
        badData[30] ^= 0x40;
        s.put("flipped-compressed-data", snappy(2, 1000).bytes(badData).toByteArray());
        s.put("padding-and-skippable", snappy(1, 1000).bytes(concat(identifier, chunk(0xfe, new byte[3]),
                chunk(0x80, new byte[600]), uncompressedFrame("ok".getBytes(StandardCharsets.US_ASCII)))).toByteArray());
        s.put("reserved-unskippable", snappy(1, 1000).bytes(concat(identifier, chunk(0x02, new byte[4])))
                .toByteArray());
        s.put("claims-16MiB-chunk", snappy(1, 1000).bytes(concat(identifier, new byte[] {0, -1, -1, -1})).toByteArray());
        s.put("claims-16MiB-skippable", snappy(1, 1000).bytes(concat(identifier, new byte[] {(byte) 0x80, -1, -1, -1}))
                .toByteArray());
        s.put("compressed-claims-4GiB", snappy(1, 1000).bytes(concat(identifier,
                chunk(0x00, new byte[] {0, 0, 0, 0, -1, -1, -1, -1, 0x0f, 0}))).toByteArray());
        s.put("uncompressed-65537-bytes", snappy(1, 65535).bytes(concat(identifier,
                uncompressedFrame(new byte[65537]))).toByteArray());
        s.put("empty-data-frame", snappy(1, 1000).bytes(concat(identifier, uncompressedFrame(new byte[0])))
                .toByteArray());
        s.put("frame-without-crc", snappy(1, 1000).bytes(concat(identifier, chunk(0x01, new byte[3]))).toByteArray());
        s.put("wrong-identifier", snappy(1, 1000).bytes(concat(new byte[] {(byte) 0xff, 6, 0, 0},
                "snappy".getBytes(StandardCharsets.US_ASCII))).toByteArray());
        s.put("gcm-message-not-snappy", snappy(1, 1000).bytes(GcmFuzzFixtures.MESSAGES.get(ONE_BYTE).sealed())
                .toByteArray());
        return s;
    }

    // ---- the command line: indices into CliArgsFuzzTest.words ----

    static final int ENCRYPT = 0, DECRYPT = 1, INFO = 2, SPEED = 3, HELP = 4, H = 5, VERSION = 6, EMPTY_WORD = 9,
            MODE = 10, CTR = 12, AES = 13, A128 = 14, A192 = 16, KEY_HEX = 17, KEY = 18, KEY_128 = 19, KEY_FILE = 20,
            KEY_FILE_HEX = 21, KEY_FILE_RAW16 = 22, KEY_FILE_BAD = 23, IV_HEX = 24, IV = 25, CONTEXT_HEX = 26,
            NOT_HEX = 28, ENGINE = 29, JCE = 31, JNA = 33, COMPRESS = 35, SNAPPY = 36, THREADS = 37, ZERO = 38,
            TWO = 40, SIXTY_FIVE = 41, RAW = 43, JSON = 44, SECONDS = 45, TOO_SHORT = 46, NAN = 48, CHART = 49,
            PLAIN = 50, GCM_FILE = 51, CTR_FILE = 52, SNAPPY_GCM_FILE = 53, OUT = 54, DIR = 56, MISSING = 58,
            STD = 59, DOUBLE_DASH = 60, KEY_HEX_EQ = 61, TXT = 65, CFB = 68;

    private static byte[] args(Object... words) {
        FuzzInput.Writer w = new FuzzInput.Writer().u8(words.length);
        for (Object word : words) {
            if (word instanceof Integer i) {
                w.u8(i);
            } else {
                w.u8(255).blob(((String) word).getBytes(StandardCharsets.UTF_8));
            }
        }
        return w.toByteArray();
    }

    private static Map<String, byte[]> cli() {
        Map<String, byte[]> s = new LinkedHashMap<>();
        s.put("no-arguments", args());
        s.put("info", args(INFO));
        s.put("info-json", args(INFO, JSON));
        s.put("help", args(HELP));
        s.put("version", args(VERSION));
        s.put("encrypt-help", args(ENCRYPT, HELP));
        s.put("speed-help", args(SPEED, H));
        s.put("empty-command", args(EMPTY_WORD));
        s.put("encrypt", args(ENCRYPT, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT));
        s.put("encrypt-aes128-jce", args(ENCRYPT, AES, A128, ENGINE, JCE, KEY_FILE, KEY_FILE_RAW16, PLAIN, OUT));
        s.put("encrypt-snappy-threads", args(ENCRYPT, COMPRESS, SNAPPY, THREADS, TWO, KEY_HEX, KEY, PLAIN, OUT));
        s.put("decrypt", args(DECRYPT, KEY_FILE, KEY_FILE_HEX, GCM_FILE, OUT));
        s.put("decrypt-jna", args(DECRYPT, ENGINE, JNA, KEY_HEX_EQ, GCM_FILE, OUT));
        s.put("decrypt-ctr", args(DECRYPT, MODE, CTR, IV_HEX, IV, KEY_HEX, KEY, CTR_FILE, OUT));
        s.put("decrypt-snappy", args(DECRYPT, COMPRESS, SNAPPY, KEY_FILE, KEY_FILE_HEX, SNAPPY_GCM_FILE, OUT));
        s.put("decrypt-compressed-refused", args(DECRYPT, KEY_FILE, KEY_FILE_HEX, SNAPPY_GCM_FILE, OUT));
        s.put("decrypt-raw", args(DECRYPT, RAW, KEY_FILE, KEY_FILE_HEX, SNAPPY_GCM_FILE, OUT));
        s.put("decrypt-not-gcm", args(DECRYPT, KEY_FILE, KEY_FILE_HEX, CTR_FILE, OUT));
        s.put("decrypt-plaintext", args(DECRYPT, KEY_HEX, KEY, PLAIN, OUT));
        s.put("decrypt-missing-input", args(DECRYPT, KEY_FILE, KEY_FILE_HEX, MISSING, OUT));
        s.put("decrypt-key-as-input", args(DECRYPT, KEY_FILE, KEY_FILE_HEX, KEY, OUT));
        s.put("encrypt-directory-input", args(ENCRYPT, KEY_FILE, KEY_FILE_HEX, DIR, OUT));
        s.put("encrypt-directory-output", args(ENCRYPT, KEY_FILE, KEY_FILE_HEX, PLAIN, DIR));
        s.put("encrypt-same-file", args(ENCRYPT, KEY_FILE, KEY_FILE_HEX, PLAIN, PLAIN));
        s.put("encrypt-stdin", args(ENCRYPT, KEY_FILE, KEY_FILE_HEX, STD, OUT));
        s.put("key-128-with-aes-256", args(ENCRYPT, KEY_HEX, KEY_128, PLAIN, OUT));
        s.put("aes-192", args(ENCRYPT, AES, A192, KEY_HEX, KEY, PLAIN, OUT));
        s.put("bad-key-file", args(ENCRYPT, KEY_FILE, KEY_FILE_BAD, PLAIN, OUT));
        s.put("key-file-is-the-key", args(ENCRYPT, KEY_FILE, KEY, PLAIN, OUT));
        s.put("key-twice", args(ENCRYPT, KEY_HEX, KEY, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT));
        s.put("key-missing", args(ENCRYPT, PLAIN, OUT));
        s.put("key-hex-without-value", args(ENCRYPT, PLAIN, OUT, KEY_HEX));
        s.put("key-not-hex", args(ENCRYPT, KEY_HEX, NOT_HEX, PLAIN, OUT));
        s.put("iv-in-gcm", args(ENCRYPT, IV_HEX, IV, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT));
        s.put("context-in-ctr", args(ENCRYPT, MODE, CTR, CONTEXT_HEX, NOT_HEX, IV_HEX, IV, KEY_HEX, KEY, PLAIN, OUT));
        s.put("ctr-without-iv", args(ENCRYPT, MODE, CTR, KEY_HEX, KEY, PLAIN, OUT));
        s.put("threads-0", args(ENCRYPT, THREADS, ZERO, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT));
        s.put("threads-65", args(ENCRYPT, THREADS, SIXTY_FIVE, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT));
        s.put("threads-is-the-key", args(ENCRYPT, THREADS, KEY, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT));
        s.put("mode-is-the-key", args(DECRYPT, MODE, KEY, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT));
        s.put("typo-with-key", args("encrpyt", KEY_HEX, KEY, PLAIN, OUT));
        s.put("unknown-option-with-key", args(ENCRYPT, "--kye-hex=" + "c0ffee0fa11ed15ea5edbadc", PLAIN, OUT));
        s.put("too-many-arguments", args(ENCRYPT, KEY_FILE, KEY_FILE_HEX, PLAIN, OUT, KEY));
        s.put("double-dash", args(ENCRYPT, DOUBLE_DASH, KEY_HEX, KEY));
        s.put("speed-seconds-too-short", args(SPEED, SECONDS, TOO_SHORT));
        s.put("speed-seconds-nan", args(SPEED, SECONDS, NAN));
        s.put("speed-unknown-mode", args(SPEED, MODE, "gcm,zstd"));
        s.put("speed-chart-txt", args(SPEED, MODE, CFB, CHART, TXT));
        s.put("nul-in-path", args(ENCRYPT, KEY_FILE, KEY_FILE_HEX, "a\u0000b", OUT));
        // Found by fuzzing, fixed since: a root has no file name; --chart's errors repeated the value.
        s.put("speed-chart-root", args(SPEED, CHART, "/"));
        s.put("speed-chart-is-the-key", args(SPEED, MODE, CFB, CHART, KEY_HEX_EQ));
        s.put("speed-chart-newline", args(SPEED, CHART, "x\n"));
        return s;
    }
}
