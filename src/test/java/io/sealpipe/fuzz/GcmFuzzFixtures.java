package io.sealpipe.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.gcm.GcmStreams;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

/**
 * What the GCM fuzz targets start from: the frozen messages of {@code src/test/resources/gcm}
 * (listed in {@code golden.json}: Cobblestone-256 of 0, 1, 16384 and 40000 bytes, Cobblestone-128
 * of 20000 bytes; fixed test keys), and the tampering a fuzz input asks for. Starting from valid
 * messages lets the fuzzer reach the chunk code at all (random bytes never pass the key
 * commitment), and knowing the original lets the targets check every byte a reader returns.
 */
final class GcmFuzzFixtures {
    private GcmFuzzFixtures() {}

    /** Cobblestone's layout (docs/FORMAT.md): a 56-byte header, then chunks of 16 KiB + a 16-byte tag. */
    static final int HEADER = 56;
    static final int CHUNK = 16384;
    static final int SEALED_CHUNK = CHUNK + 16;

    /** One frozen message and a {@link GcmStreams} for it per engine that runs here. */
    record Message(String name, byte[] plain, byte[] sealed, List<GcmStreams> streams) {
        GcmStreams streams(int engineChoice) {
            return streams.get(engineChoice % streams.size());
        }
    }

    static final List<EngineKind> ENGINES = availableEngines();
    static final List<Message> MESSAGES = load();

    static Message message(int choice) {
        return MESSAGES.get(choice % MESSAGES.size());
    }

    private static List<EngineKind> availableEngines() {
        List<EngineKind> kinds = new ArrayList<>();
        for (EngineKind k : EngineKind.values()) {
            if (Engines.report().status(k).available()) {
                kinds.add(k);
            }
        }
        if (kinds.isEmpty()) {
            throw new IllegalStateException("no engine runs here: " + Engines.report().describe());
        }
        return List.copyOf(kinds);
    }

    private static List<Message> load() {
        try {
            HexFormat hex = HexFormat.of();
            List<Message> messages = new ArrayList<>();
            for (JsonNode v : new ObjectMapper().readTree(resource("golden.json")).get("vectors")) {
                byte[] key = hex.parseHex(v.get("key").asText());
                byte[] context = hex.parseHex(v.get("context").asText());
                byte[] plain = new byte[v.get("plaintextLength").asInt()];
                new Random(v.get("plaintextSeed").asLong()).nextBytes(plain);
                List<GcmStreams> streams = new ArrayList<>();
                for (EngineKind k : ENGINES) {
                    streams.add(GcmStreams.builder().key(key).context(context).engine(Engines.get(k)).build());
                }
                Arrays.fill(key, (byte) 0);
                String file = v.get("file").asText();
                messages.add(new Message(file, plain, resource(file), List.copyOf(streams)));
            }
            return List.copyOf(messages);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = GcmFuzzFixtures.class.getResourceAsStream("/gcm/" + name)) {
            if (in == null) {
                throw new IOException("missing test resource /gcm/" + name);
            }
            return in.readAllBytes();
        }
    }

    /** The tampering operations a fuzz input lists, each an opcode and its fields. */
    enum Op {
        /** Cut the message to u31 mod (length + 1) bytes. */
        TRUNCATE,
        /** Flip bit u31 mod (8 * length). */
        FLIP_BIT,
        /** Swap chunks u8 and u8 (mod the chunk count). */
        SWAP_CHUNKS,
        /** Append a blob. */
        APPEND,
        /** Repeat chunk u8 after itself. */
        DUPLICATE_CHUNK,
        /** Remove chunk u8. */
        DROP_CHUNK,
        /** Set byte u31 mod length to u8. */
        SET_BYTE,
        /** Replace chunk u8 by chunk u8 of message u8 (another key or context, or another position). */
        SPLICE_CHUNK,
        /** Replace the whole message by a blob: arbitrary bytes. */
        REPLACE;

        static Op of(int code) {
            return values()[code % values().length];
        }
    }

    /** The most operations one input applies. */
    static final int MAX_OPS = 8;

    /**
     * Applies the operations {@code in} lists (a u8 count, then each opcode and fields) to a copy
     * of {@code sealed}; {@code trace} gets each one, for the failure message.
     */
    static byte[] tamper(byte[] sealed, FuzzInput in, List<String> trace) {
        byte[] m = sealed.clone();
        int count = in.u8() % (MAX_OPS + 1);
        for (int i = 0; i < count; i++) {
            Op op = Op.of(in.u8());
            switch (op) {
                case TRUNCATE -> {
                    int n = in.u31() % (m.length + 1);
                    m = Arrays.copyOf(m, n);
                    trace.add("truncate to " + n);
                }
                case FLIP_BIT -> {
                    int bit = in.u31();
                    if (m.length > 0) {
                        bit %= 8 * m.length;
                        m[bit / 8] ^= (byte) (1 << (bit % 8));
                        trace.add("flip bit " + bit);
                    }
                }
                case SWAP_CHUNKS -> {
                    List<byte[]> chunks = chunks(m);
                    int a = in.u8();
                    int b = in.u8();
                    if (chunks.size() > 1) {
                        a = 1 + a % (chunks.size() - 1);
                        b = 1 + b % (chunks.size() - 1);
                        byte[] t = chunks.get(a);
                        chunks.set(a, chunks.get(b));
                        chunks.set(b, t);
                        m = join(chunks);
                        trace.add("swap chunks " + (a - 1) + " and " + (b - 1));
                    }
                }
                case APPEND -> {
                    byte[] tail = in.blob();
                    m = join(List.of(m, tail));
                    trace.add("append " + tail.length + " bytes");
                }
                case DUPLICATE_CHUNK -> {
                    List<byte[]> chunks = chunks(m);
                    int a = in.u8();
                    if (chunks.size() > 1) {
                        a = 1 + a % (chunks.size() - 1);
                        chunks.add(a + 1, chunks.get(a));
                        m = join(chunks);
                        trace.add("duplicate chunk " + (a - 1));
                    }
                }
                case DROP_CHUNK -> {
                    List<byte[]> chunks = chunks(m);
                    int a = in.u8();
                    if (chunks.size() > 1) {
                        a = 1 + a % (chunks.size() - 1);
                        chunks.remove(a);
                        m = join(chunks);
                        trace.add("drop chunk " + (a - 1));
                    }
                }
                case SET_BYTE -> {
                    int at = in.u31();
                    int value = in.u8();
                    if (m.length > 0) {
                        at %= m.length;
                        m[at] = (byte) value;
                        trace.add("set byte " + at + " to " + value);
                    }
                }
                case SPLICE_CHUNK -> {
                    List<byte[]> chunks = chunks(m);
                    int a = in.u8();
                    Message other = message(in.u8());
                    List<byte[]> theirs = chunks(other.sealed());
                    int b = in.u8();
                    if (chunks.size() > 1 && theirs.size() > 1) {
                        a = 1 + a % (chunks.size() - 1);
                        b = 1 + b % (theirs.size() - 1);
                        chunks.set(a, theirs.get(b));
                        m = join(chunks);
                        trace.add("replace chunk " + (a - 1) + " by chunk " + (b - 1) + " of " + other.name());
                    }
                }
                case REPLACE -> {
                    m = in.blob();
                    trace.add("replace by " + m.length + " arbitrary bytes");
                }
            }
        }
        return m;
    }

    /** The header (up to 56 bytes), then each sealed chunk (the last one may be short). */
    static List<byte[]> chunks(byte[] m) {
        List<byte[]> parts = new ArrayList<>();
        parts.add(Arrays.copyOf(m, Math.min(HEADER, m.length)));
        for (int at = HEADER; at < m.length; at += SEALED_CHUNK) {
            parts.add(Arrays.copyOfRange(m, at, Math.min(at + SEALED_CHUNK, m.length)));
        }
        return parts;
    }

    private static byte[] join(List<byte[]> parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /**
     * Whether chunk {@code index} of the original message is in {@code tampered} as it was: the
     * header and that chunk's bytes unchanged at their place and, for the final chunk (the
     * only short one), the length unchanged too. Only such a chunk can authenticate.
     */
    static boolean intact(byte[] original, byte[] tampered, long index) {
        if (!Arrays.equals(original, 0, Math.min(HEADER, original.length), tampered, 0,
                Math.min(HEADER, tampered.length))) {
            return false;
        }
        long from = HEADER + index * SEALED_CHUNK;
        long to = Math.min(from + SEALED_CHUNK, original.length);
        if (from >= original.length || to > tampered.length) {
            return false;
        }
        boolean isFinal = to - from < SEALED_CHUNK;
        return Arrays.equals(original, (int) from, (int) to, tampered, (int) from, (int) to)
                && (!isFinal || original.length == tampered.length);
    }

    /**
     * The most plaintext a streaming reader may release from {@code tampered}: the leading chunks
     * that are intact and that the reader can know are not the final one, a byte coming after
     * them. A full chunk at the end cannot be told from a final one, so it is not counted.
     */
    static long releasable(byte[] original, byte[] tampered) {
        if (Arrays.equals(original, tampered)) {
            return Long.MAX_VALUE;
        }
        long chunks = 0;
        while (intact(original, tampered, chunks)
                && tampered.length > HEADER + (chunks + 1) * SEALED_CHUNK
                && HEADER + (chunks + 1) * SEALED_CHUNK <= original.length) {
            chunks++;
        }
        return chunks * CHUNK;
    }
}
