package io.sealpipe.gcm;

import static io.sealpipe.CtrFixtures.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrFixtures;
import io.sealpipe.CtrFixtures.FaultyOutputStream;
import io.sealpipe.CtrFixtures.MemoryChannel;
import io.sealpipe.CtrFixtures.OneByteAtATime;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tamper suite of the chunked GCM format (after Tink's
 * {@code StreamingTestUtil.testModifiedCiphertext}), on every engine and both key sizes, for a
 * message of 3 full chunks and a partial final chunk, one of exactly 2 full chunks (its final
 * chunk is empty) and the empty message. Each modified ciphertext (a flipped bit in every region,
 * truncation at and inside every chunk and the header, extension, dropped, duplicated, swapped or
 * spliced chunks, wrong key or context) must be rejected with a
 * {@link StreamAuthenticationException} by the streaming reader under every read pattern and by
 * the random-access channel, and no byte that was not authenticated may reach the caller: the
 * streaming reader may release only whole chunks before the first modified one, a failed read
 * leaves zeros or the caller's own bytes in its array, and a failed stream keeps failing.
 *
 * <p>Failures are collected over all variants and reported at once. The layout constants are
 * written out from the specification (docs/FORMAT.md, c2sp.org/chunked-encryption), not taken
 * from {@link Cobblestone}, so a layout mistake there cannot hide here.
 */
class GcmTamperTest {
    static final int HEADER = 56;            // salt (24) and commitment (32)
    static final int CHUNK = 16384;          // plaintext of a full chunk
    static final int TAG = 16;
    static final int SEALED = CHUNK + TAG;   // a sealed full chunk
    /** Fills the caller's arrays before a read: a failed read may leave this or zeros, nothing else. */
    static final byte MARKER = (byte) 0xA5;
    static final byte[] CONTEXT = "shuffle_3_7_0".getBytes();
    /** 3 full chunks and a partial one; 2 full chunks and an empty final chunk; the empty message. */
    static final int[] SIZES = {3 * CHUNK + 5000, 2 * CHUNK, 0};

    @TempDir
    Path dir;

    /**
     * A modified ciphertext and what a reader must report: whether the header check fails (the
     * channel's {@code open} throws, chunk -1), the first chunk whose ciphertext changed (no
     * plaintext from it or later may be released), the chunk numbers {@code chunk()} may give for
     * a whole read (empty: any), and for {@code size()} either null (the length and final chunk
     * are intact: it returns the true length) or the chunk numbers its failure may give.
     */
    record Variant(String name, byte[] sealed, GcmStreams reader, boolean headerBad, long firstBad, long[] readChunks,
            long[] sizeChunks) {
    }

    static GcmStreams gcm(EngineKind kind, byte[] key, byte[] context, long saltSeed) {
        return GcmStreams.builder().key(key).context(context).engine(TestEngines.engine(kind))
                .fixedSaltForTests(bytes(saltSeed, 24)).build();
    }

    static byte[] encrypt(GcmStreams gcm, byte[] plain) throws IOException {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (OutputStream out = gcm.encrypt(sink)) {
            out.write(plain);
        }
        return sink.toByteArray();
    }

    static int chunkOffset(long index) {
        return (int) (HEADER + index * SEALED);
    }

    static byte[] flip(byte[] sealed, int at) {
        byte[] b = sealed.clone();
        b[at] ^= 1;
        return b;
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static byte[] range(byte[] b, int from, int to) {
        return Arrays.copyOfRange(b, from, to);
    }

    static byte[] chunk(byte[] sealed, int k) {
        return range(sealed, chunkOffset(k), Math.min(sealed.length, chunkOffset(k + 1)));
    }

    /** Every modified ciphertext of a {@code size}-byte message under {@code key}, with what readers must say. */
    static List<Variant> variants(EngineKind kind, byte[] key, int size) throws IOException {
        GcmStreams gcm = gcm(kind, key, CONTEXT, 1);
        byte[] plain = bytes(size, size);
        byte[] sealed = encrypt(gcm, plain);
        byte[] other = encrypt(gcm(kind, key, CONTEXT, 2), plain); // same key and context, another salt
        int full = size / CHUNK;              // F: full chunks; the final chunk is chunk F
        int finalLength = size % CHUNK + TAG; // sealed length of the final chunk
        long[] f = {full};
        long[] header = {-1};
        List<Variant> v = new ArrayList<>();

        for (int at : new int[] {0, 23}) {
            v.add(new Variant("flip salt byte " + at, flip(sealed, at), gcm, true, 0, header, header));
        }
        for (int at : new int[] {24, 55}) {
            v.add(new Variant("flip commitment byte " + at, flip(sealed, at), gcm, true, 0, header, header));
        }
        for (int k = 0; k < full; k++) {
            int o = chunkOffset(k);
            long[] c = {k};
            v.add(new Variant("flip chunk " + k + " body byte 0", flip(sealed, o), gcm, false, k, c, null));
            v.add(new Variant("flip chunk " + k + " body byte 8191", flip(sealed, o + 8191), gcm, false, k, c, null));
            v.add(new Variant("flip chunk " + k + " tag byte 0", flip(sealed, o + CHUNK), gcm, false, k, c, null));
            v.add(new Variant("flip chunk " + k + " tag byte 15", flip(sealed, o + SEALED - 1), gcm, false, k, c, null));
        }
        int fo = chunkOffset(full);
        if (finalLength > TAG) {
            v.add(new Variant("flip final chunk body byte 0", flip(sealed, fo), gcm, false, full, f, f));
            v.add(new Variant("flip final chunk last body byte", flip(sealed, fo + finalLength - TAG - 1), gcm, false,
                    full, f, f));
        }
        v.add(new Variant("flip final chunk tag byte 0", flip(sealed, fo + finalLength - TAG), gcm, false, full, f, f));
        v.add(new Variant("flip final chunk tag byte 15", flip(sealed, sealed.length - 1), gcm, false, full, f, f));

        for (int length : new int[] {0, 1, 23, 24, 55}) {
            v.add(new Variant("truncate to " + length + " bytes (inside the header)", range(sealed, 0, length), gcm, true,
                    0, header, header));
        }
        for (int k = 0; k <= full; k++) {
            // Cut before chunk k: the stream may name chunk k-1 (it ends on a full chunk), chunk k or -1 (length).
            v.add(new Variant("truncate at the start of chunk " + k, range(sealed, 0, chunkOffset(k)), gcm, false, k,
                    LongStream.of(-1, k - 1, k).distinct().toArray(), header));
        }
        for (int k = 0; k <= full; k++) {
            int sealedLength = k < full ? SEALED : finalLength;
            int[] cuts = IntStream.of(1, 15, 16, 17, 8192, sealedLength - 1)
                    .filter(o -> o > 0 && o < sealedLength).distinct().toArray();
            for (int o : cuts) {
                // Shorter than a tag: no message has this length (-1); else chunk k is the final one and fails.
                long[] sizeChunks = o < TAG ? header : new long[] {k};
                v.add(new Variant("truncate inside chunk " + k + " after " + o + " bytes",
                        range(sealed, 0, chunkOffset(k) + o), gcm, false, k, new long[] {-1, k}, sizeChunks));
            }
        }

        v.add(new Variant("append 1 byte", concat(sealed, new byte[1]), gcm, false, full, f, f));
        v.add(new Variant("append 16 bytes", concat(sealed, bytes(3, 16)), gcm, false, full, f, f));
        byte[] someChunk = full > 0 ? chunk(sealed, 0) : bytes(4, SEALED);
        v.add(new Variant("append a whole chunk (" + (full > 0 ? "copy of chunk 0" : "random") + ")",
                concat(sealed, someChunk), gcm, false, full, f, new long[] {full + 1}));
        v.add(new Variant("append a copy of the final chunk", concat(sealed, chunk(sealed, full)), gcm, false, full, f,
                f));

        for (int k = 0; k < full; k++) {
            v.add(new Variant("drop chunk " + k, concat(range(sealed, 0, chunkOffset(k)),
                    range(sealed, chunkOffset(k + 1), sealed.length)), gcm, false, k, new long[] {k},
                    new long[] {full - 1}));
            v.add(new Variant("duplicate chunk " + k, concat(range(sealed, 0, chunkOffset(k + 1)), chunk(sealed, k),
                    range(sealed, chunkOffset(k + 1), sealed.length)), gcm, false, k + 1, new long[] {k + 1},
                    new long[] {full + 1}));
        }
        for (int i = 0; i < full; i++) {
            for (int j = i + 1; j < full; j++) {
                byte[] b = sealed.clone();
                System.arraycopy(sealed, chunkOffset(i), b, chunkOffset(j), SEALED);
                System.arraycopy(sealed, chunkOffset(j), b, chunkOffset(i), SEALED);
                v.add(new Variant("swap chunks " + i + " and " + j, b, gcm, false, i, new long[] {i}, null));
            }
        }
        for (int k = 0; k <= full; k++) {
            byte[] b = sealed.clone();
            int length = k < full ? SEALED : finalLength;
            System.arraycopy(other, chunkOffset(k), b, chunkOffset(k), length);
            v.add(new Variant("chunk " + k + " from another message", b, gcm, false, k, new long[] {k},
                    k < full ? null : f));
        }
        byte[] otherHeader = sealed.clone();
        System.arraycopy(other, 0, otherHeader, 0, HEADER); // a valid commitment for other chunks
        v.add(new Variant("header from another message", otherHeader, gcm, false, 0, new long[] {0}, f));

        byte[] otherKey = bytes(33, key.length);
        byte[] shortKey = Arrays.copyOf(key, key.length == 32 ? 16 : 32);
        v.add(new Variant("wrong key", sealed, gcm(kind, otherKey, CONTEXT, 9), true, 0, header, header));
        v.add(new Variant("wrong key size (" + shortKey.length + " bytes)", sealed, gcm(kind, shortKey, CONTEXT, 9), true,
                0, header, header));
        v.add(new Variant("wrong context", sealed, gcm(kind, key, "shuffle_3_7_1".getBytes(), 9), true, 0, header,
                header));
        v.add(new Variant("empty context", sealed, gcm(kind, key, new byte[0], 9), true, 0, header, header));
        return v;
    }

    // ---------------------------------------------------------------------------------------------
    // Streaming reader

    /** Reads a stream until its end or a failure, recording what it released and any array it spoiled. */
    interface ReadPattern {
        /** @return the failure, or null if the stream reached a clean end */
        IOException read(GcmInputStream in, ByteArrayOutputStream got, List<String> problems);
    }

    record Pattern(String name, BiFunction<GcmStreams, byte[], GcmInputStream> source, ReadPattern reader) {
    }

    static GcmInputStream fromStream(GcmStreams gcm, byte[] sealed) {
        return gcm.decrypt(new ByteArrayInputStream(sealed));
    }

    static final List<Pattern> PATTERNS = List.of(
            new Pattern("readAllBytes", GcmTamperTest::fromStream, (in, got, problems) -> {
                try {
                    got.writeBytes(in.readAllBytes());
                    return null;
                } catch (IOException e) {
                    return e;
                }
            }),
            new Pattern("readAllBytes, one-byte-a-time source",
                    (gcm, sealed) -> gcm.decrypt(new OneByteAtATime(new ByteArrayInputStream(sealed))),
                    (in, got, problems) -> {
                        try {
                            got.writeBytes(in.readAllBytes());
                            return null;
                        } catch (IOException e) {
                            return e;
                        }
                    }),
            new Pattern("read() each byte", GcmTamperTest::fromStream, (in, got, problems) -> {
                try {
                    for (int b; (b = in.read()) >= 0; ) {
                        got.write(b);
                    }
                    return null;
                } catch (IOException e) {
                    return e;
                }
            }),
            new Pattern("1000-byte reads", GcmTamperTest::fromStream, (in, got, problems) ->
                    arrayReads(in, 0, 1000, got, problems)),
            new Pattern("direct reads of 3 chunks + 100 at offset 7", GcmTamperTest::fromStream, (in, got, problems) ->
                    arrayReads(in, 7, 3 * CHUNK + 100, got, problems)),
            new Pattern("direct 16 KiB reads from a channel",
                    (gcm, sealed) -> gcm.decrypt(Channels.newChannel(new ByteArrayInputStream(sealed))),
                    (in, got, problems) -> arrayReads(in, 0, CHUNK, got, problems)),
            new Pattern("20000-byte reads, one-byte-a-time source",
                    (gcm, sealed) -> gcm.decrypt(new OneByteAtATime(new ByteArrayInputStream(sealed))),
                    (in, got, problems) -> arrayReads(in, 1, 20000, got, problems)),
            new Pattern("direct ByteBuffers of 5000 from a seekable channel",
                    (gcm, sealed) -> gcm.decrypt(new MemoryChannel(sealed, true)),
                    GcmTamperTest::directBufferReads),
            new Pattern("direct reads of 2 chunks + 9 from a direct buffer in memory",
                    (gcm, sealed) -> gcm.decrypt(ByteBuffer.allocateDirect(sealed.length).put(sealed).flip()),
                    (in, got, problems) -> arrayReads(in, 5, 2 * CHUNK + 9, got, problems)),
            new Pattern("1000-byte reads from a heap buffer in memory",
                    (gcm, sealed) -> gcm.decrypt(ByteBuffer.wrap(sealed)),
                    (in, got, problems) -> arrayReads(in, 0, 1000, got, problems)),
            new Pattern("skip to the end", GcmTamperTest::fromStream, (in, got, problems) -> {
                try {
                    while (in.skip(5000) > 0) {
                        // skip on
                    }
                    return null;
                } catch (IOException e) {
                    return e;
                }
            }));

    /** Reads into fresh marker-filled arrays; after each call, bytes the read did not return must be untouched or zero. */
    static IOException arrayReads(GcmInputStream in, int off, int len, ByteArrayOutputStream got, List<String> problems) {
        while (true) {
            byte[] b = new byte[off + len + 3];
            Arrays.fill(b, MARKER);
            int n;
            IOException failure = null;
            try {
                n = in.read(b, off, len);
            } catch (IOException e) {
                n = 0;
                failure = e;
            }
            int bad = spoiled(b, 0, off);
            if (bad < 0) {
                bad = spoiled(b, off + Math.max(n, 0), b.length);
            }
            if (bad >= 0) {
                problems.add("read(b, " + off + ", " + len + ") " + (failure != null ? "that failed" : "returning " + n)
                        + " after " + got.size() + " bytes left byte " + bad + " of the array neither its own nor zero");
            }
            if (failure != null) {
                return failure;
            }
            if (n < 0) {
                return null;
            }
            got.write(b, off, n);
        }
    }

    static IOException directBufferReads(GcmInputStream in, ByteArrayOutputStream got, List<String> problems) {
        ByteBuffer direct = ByteBuffer.allocateDirect(5000);
        byte[] copy = new byte[direct.capacity()];
        while (true) {
            direct.clear();
            while (direct.hasRemaining()) {
                direct.put(MARKER);
            }
            direct.clear();
            int n;
            IOException failure = null;
            try {
                n = in.read(direct);
            } catch (IOException e) {
                n = 0;
                failure = e;
            }
            direct.get(0, copy);
            int bad = spoiled(copy, direct.position(), copy.length);
            if (bad >= 0) {
                problems.add("read(direct ByteBuffer) " + (failure != null ? "that failed" : "returning " + n) + " after "
                        + got.size() + " bytes left byte " + bad + " beyond its position neither its own nor zero");
            }
            if (failure != null) {
                return failure;
            }
            if (n < 0) {
                return null;
            }
            got.write(copy, 0, n);
        }
    }

    /** The index of the first byte of b[from, to) that is neither the marker nor zero, or -1. */
    static int spoiled(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != MARKER && b[i] != 0) {
                return i;
            }
        }
        return -1;
    }

    /** Null if {@code released} is plaintext[0, k) with k a whole number of chunks, at most {@code firstBad} of them. */
    static String authenticPrefix(byte[] released, byte[] plain, long firstBad) {
        if (released.length % CHUNK != 0 || released.length > firstBad * CHUNK) {
            return "released " + released.length + " bytes: not whole chunks before chunk " + firstBad;
        }
        if (released.length > plain.length || !Arrays.equals(released, 0, released.length, plain, 0, released.length)) {
            return "released " + released.length + " bytes that are not the plaintext's first bytes";
        }
        return null;
    }

    static String chunks(long[] allowed) {
        return allowed.length == 0 ? "any" : LongStream.of(allowed).mapToObj(Long::toString)
                .collect(Collectors.joining(" or "));
    }

    static void checkChunk(List<String> failures, String where, StreamAuthenticationException e, long[] allowed) {
        if (allowed.length > 0 && LongStream.of(allowed).noneMatch(c -> c == e.chunk())) {
            failures.add(where + ": chunk() " + e.chunk() + ", expected " + chunks(allowed) + " (" + e.getMessage() + ")");
        }
    }

    /** A call on a stream that already failed; it must throw the failure again. */
    interface Probe {
        Object call(GcmInputStream in) throws IOException;
    }

    /** available() first, as it consumes nothing; then calls that would consume stale bytes, if any. */
    static final List<String> PROBE_NAMES = List.of("available()", "read()", "read(b, 0, 10)", "skip(1)",
            "read(heap ByteBuffer)", "read(direct ByteBuffer)", "read(b, 0, 3 chunks)", "readAllBytes()");
    static final List<Probe> PROBES = List.of(
            in -> in.available(),
            in -> in.read(),
            in -> in.read(new byte[10], 0, 10),
            in -> in.skip(1),
            in -> in.read(ByteBuffer.allocate(20000)),
            in -> in.read(ByteBuffer.allocateDirect(100)),
            in -> in.read(new byte[3 * CHUNK], 0, 3 * CHUNK),
            in -> in.readAllBytes().length);

    static void checkStream(List<String> failures, String where, Variant v, byte[] plain, Pattern pattern) {
        String at = where + " / " + pattern.name();
        List<String> problems = new ArrayList<>();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        GcmInputStream in = pattern.source().apply(v.reader(), v.sealed());
        try {
            IOException e = pattern.reader().read(in, got, problems);
            for (String p : problems) {
                failures.add(at + ": " + p);
            }
            if (e == null) {
                failures.add(at + ": accepted (" + got.size() + " bytes, then a clean end)");
                return;
            }
            if (!(e instanceof StreamAuthenticationException sae)) {
                failures.add(at + ": threw " + e + " instead of a StreamAuthenticationException");
                return;
            }
            checkChunk(failures, at, sae, v.headerBad() ? new long[] {-1} : v.readChunks());
            String prefix = authenticPrefix(got.toByteArray(), plain, v.firstBad());
            if (prefix != null) {
                failures.add(at + ": " + prefix);
            }
            long counted = in.plaintextRead();
            if (counted % CHUNK != 0 || counted > v.firstBad() * CHUNK) {
                failures.add(at + ": plaintextRead() " + counted + " is not whole chunks before chunk " + v.firstBad());
            }
            for (int i = 0; i < PROBES.size(); i++) {
                try {
                    Object r = PROBES.get(i).call(in);
                    failures.add(at + ": after the failure " + PROBE_NAMES.get(i) + " returned " + r + " instead of throwing");
                } catch (StreamAuthenticationException again) {
                    if (again.chunk() != sae.chunk()) {
                        failures.add(at + ": after the failure " + PROBE_NAMES.get(i) + " named chunk " + again.chunk()
                                + ", not " + sae.chunk());
                    }
                } catch (IOException | RuntimeException other) {
                    failures.add(at + ": after the failure " + PROBE_NAMES.get(i) + " threw " + other);
                }
            }
        } finally {
            try {
                in.close();
            } catch (IOException e) {
                failures.add(at + ": close() threw " + e);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Random-access channel

    void checkChannel(List<String> failures, String where, Variant v, byte[] plain, SeekableByteChannel raw) {
        GcmSeekableChannel ch;
        try {
            ch = v.reader().open(raw);
        } catch (StreamAuthenticationException e) {
            if (!v.headerBad()) {
                failures.add(where + ": open() failed (" + e.getMessage() + "), but the header is intact");
            }
            checkChunk(failures, where + " open()", e, new long[] {-1});
            return;
        } catch (IOException | RuntimeException e) {
            failures.add(where + ": open() threw " + e);
            return;
        }
        try (ch) {
            if (v.headerBad()) {
                failures.add(where + ": open() accepted a bad header");
            }
            try {
                long size = ch.size();
                if (v.sizeChunks() != null) {
                    failures.add(where + ": size() returned " + size + " instead of failing");
                } else if (size != plain.length) {
                    failures.add(where + ": size() " + size + ", not " + plain.length);
                }
            } catch (StreamAuthenticationException e) {
                if (v.sizeChunks() == null) {
                    failures.add(where + ": size() failed (" + e.getMessage() + "), but the length and final chunk are intact");
                } else {
                    checkChunk(failures, where + " size()", e, v.sizeChunks());
                }
            }

            // The whole message through read(ByteBuffer), into a marker-filled heap buffer.
            byte[] all = new byte[plain.length + 100];
            Arrays.fill(all, MARKER);
            ByteBuffer dst = ByteBuffer.wrap(all);
            StreamAuthenticationException failed = null;
            try {
                while (dst.hasRemaining() && ch.read(dst) >= 0) {
                    // read on
                }
                failures.add(where + ": read(ByteBuffer) read " + dst.position() + " bytes to a clean end");
            } catch (StreamAuthenticationException e) {
                failed = e;
                checkChunk(failures, where + " read(ByteBuffer)", e, v.readChunks());
            }
            checkReleased(failures, where + " read(ByteBuffer)", all, plain, v.firstBad());

            // One byte past the true end: either a modified chunk or the end check fails on the way (a
            // read of exactly the true length may succeed when only an empty final chunk or what follows it
            // was modified, since random access decrypts only the chunks it touches).
            byte[] fully = new byte[plain.length + 7];
            Arrays.fill(fully, MARKER);
            try {
                ch.readFully(0, fully, 3, plain.length + 1);
                failures.add(where + ": readFully(0, " + (plain.length + 1) + " bytes) succeeded");
            } catch (StreamAuthenticationException e) {
                checkChunk(failures, where + " readFully", e, v.readChunks());
            } catch (IOException e) {
                failures.add(where + ": readFully threw " + e);
            }
            if (spoiled(fully, 0, 3) >= 0) {
                failures.add(where + ": readFully wrote before its offset");
            }
            checkReleased(failures, where + " readFully", Arrays.copyOfRange(fully, 3, fully.length), plain, v.firstBad());

            // At the (true) end: -1 only when the length is authentic.
            try {
                int n = ch.read(ByteBuffer.allocate(10), plain.length);
                if (v.sizeChunks() != null) {
                    failures.add(where + ": read at " + plain.length + " returned " + n + " instead of failing");
                } else if (n != -1) {
                    failures.add(where + ": read at the end returned " + n);
                }
            } catch (StreamAuthenticationException e) {
                if (v.sizeChunks() == null) {
                    failures.add(where + ": read at the end failed (" + e.getMessage() + ") but the length is intact");
                }
            }
            // A chunk that failed is not remembered as good: reading it again fails again.
            if (failed != null && failed.chunk() >= 0) {
                try {
                    ch.read(ByteBuffer.allocate(1), failed.chunk() * CHUNK);
                    failures.add(where + ": chunk " + failed.chunk() + " read fine the second time");
                } catch (StreamAuthenticationException e) {
                    if (e.chunk() != failed.chunk()) {
                        failures.add(where + ": chunk " + failed.chunk() + " read again named chunk " + e.chunk());
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            failures.add(where + ": threw " + e);
        }
    }

    /** The array holds an authentic prefix of whole chunks before {@code firstBad}, then only marker or zero bytes. */
    static void checkReleased(List<String> failures, String where, byte[] region, byte[] plain, long firstBad) {
        int k = 0;
        while (k + CHUNK <= region.length && k + CHUNK <= plain.length
                && Arrays.equals(region, k, k + CHUNK, plain, k, k + CHUNK)) {
            k += CHUNK;
        }
        if (k > firstBad * CHUNK) {
            failures.add(where + ": released chunks up to " + k / CHUNK + ", past modified chunk " + firstBad);
        }
        int bad = spoiled(region, k, region.length);
        if (bad >= 0) {
            failures.add(where + ": byte " + bad + " (after " + k + " authentic bytes) is neither the caller's nor zero");
        }
    }

    // ---------------------------------------------------------------------------------------------

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void everyModifiedCiphertextIsRejectedWithoutReleasingUnauthenticatedBytes(EngineKind kind) throws IOException {
        List<String> failures = new ArrayList<>();
        int checked = 0;
        for (int keyLength : new int[] {32, 16}) {
            byte[] key = bytes(32, keyLength);
            for (int size : SIZES) {
                byte[] plain = bytes(size, size);
                // The unmodified message reads back, so every rejection below is the tampering's doing.
                GcmStreams gcm = gcm(kind, key, CONTEXT, 1);
                try (GcmInputStream in = fromStream(gcm, encrypt(gcm, plain))) {
                    CtrFixtures.check(failures, kind + " key " + keyLength + " size " + size + " unmodified", plain,
                            in.readAllBytes());
                }
                for (Variant v : variants(kind, key, size)) {
                    String where = kind + ", key " + keyLength + ", " + size + " bytes, " + v.name();
                    for (Pattern p : PATTERNS) {
                        checkStream(failures, where, v, plain, p);
                    }
                    checkChannel(failures, where + " / channel over memory", v, plain, new MemoryChannel(v.sealed(), true));
                    Path file = dir.resolve("tampered.enc");
                    Files.write(file, v.sealed());
                    try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ)) {
                        checkChannel(failures, where + " / channel over a file", v, plain, fc);
                    }
                    checked++;
                }
            }
        }
        assertTrue(checked > 200, "only " + checked + " variants");
        assertTrue(failures.isEmpty(), CtrFixtures.report(failures));
    }

    // ---------------------------------------------------------------------------------------------
    // A failing sink

    /** The stream's cipher, which must be closed after close(); read by reflection (not part of the API). */
    static AeadCipher cipherOf(GcmOutputStream out) throws ReflectiveOperationException {
        Field f = GcmOutputStream.class.getDeclaredField("cipher");
        f.setAccessible(true);
        return (AeadCipher) f.get(out);
    }

    static byte[] field(GcmOutputStream out, String name) throws ReflectiveOperationException {
        Field f = GcmOutputStream.class.getDeclaredField(name);
        f.setAccessible(true);
        return (byte[]) f.get(out);
    }

    /** After close(): the cipher refuses work and the buffers that held plaintext or keys are zero. */
    static void checkReleased(List<String> failures, String where, GcmOutputStream out) throws ReflectiveOperationException {
        try {
            cipherOf(out).seal(new byte[12], null, new byte[1], 0, 1, new byte[17], 0);
            failures.add(where + ": the cipher still works after close()");
        } catch (IllegalStateException expected) {
            // closed
        }
        for (String name : new String[] {"plain", "sealed", "baseNonce"}) {
            byte[] b = field(out, name);
            if (!Arrays.equals(b, new byte[b.length])) {
                failures.add(where + ": " + name + " not zeroed by close()");
            }
        }
    }

    /** Checks the state after close(): later writes fail, close() again is quiet, the output is rejected. */
    static void checkAfterClose(List<String> failures, String where, GcmStreams gcm, GcmOutputStream out,
            FaultyOutputStream sink) throws ReflectiveOperationException {
        if (sink.closeCalls != 1) {
            failures.add(where + ": the wrapped stream was closed " + sink.closeCalls + " times, not once");
        }
        if (sink.writesAfterFailure != 0) {
            failures.add(where + ": " + sink.writesAfterFailure + " writes reached the wrapped stream after it failed");
        }
        checkReleased(failures, where, out);
        for (int i = 0; i < 3; i++) {
            int call = i;
            try {
                switch (call) {
                    case 0 -> out.write(1);
                    case 1 -> out.write(new byte[40000]);
                    default -> out.flush();
                }
                failures.add(where + ": call " + call + " after close() succeeded");
            } catch (IOException expected) {
                // refused
            }
        }
        try {
            out.close();
        } catch (IOException e) {
            failures.add(where + ": a second close() threw " + e);
        }
        // What reached the wrapped stream is an unfinished message: every reader rejects it.
        byte[] partial = sink.written.toByteArray();
        try (GcmInputStream in = gcm.decrypt(new ByteArrayInputStream(partial))) {
            in.readAllBytes();
            failures.add(where + ": the " + partial.length + " bytes written before the failure read as a message");
        } catch (StreamAuthenticationException expected) {
            // truncated
        } catch (IOException e) {
            failures.add(where + ": reading the partial output threw " + e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void aFailingSinkFailsTheWritesAndCloseStillReleasesEverything(EngineKind kind) throws Exception {
        GcmStreams gcm = gcm(kind, bytes(32, 32), CONTEXT, 1);
        byte[] plain = bytes(5, 10 * CHUNK + 123);
        List<String> failures = new ArrayList<>();

        // The second write to the wrapped stream fails, in the middle of a long run of 1000-byte writes.
        for (boolean viaChannel : new boolean[] {false, true}) {
            String where = "sink fails midway" + (viaChannel ? " (as a channel)" : "");
            FaultyOutputStream sink = new FaultyOutputStream();
            sink.failWriteAt = 1;
            GcmOutputStream out = viaChannel ? gcm.encrypt(Channels.newChannel(sink)) : gcm.encrypt(sink);
            IOException first = null;
            int done = 0;
            try {
                for (; done < plain.length; done += 1000) {
                    out.write(plain, done, Math.min(1000, plain.length - done));
                }
                failures.add(where + ": all writes succeeded");
            } catch (IOException e) {
                first = e;
            }
            try {
                out.write(plain, 0, 10);
                failures.add(where + ": a write after the failure succeeded");
            } catch (IOException expected) {
                // refused
            }
            try {
                out.flush();
                failures.add(where + ": flush after the failure succeeded");
            } catch (IOException expected) {
                // refused
            }
            IOException closeFailure = assertThrows(IOException.class, out::close, where + ": close()");
            if (first != null && closeFailure != first && closeFailure.getCause() != first) {
                failures.add(where + ": close() threw " + closeFailure + ", not caused by the write failure " + first);
            }
            checkAfterClose(failures, where, gcm, out, sink);
        }

        // Nothing reaches the wrapped stream before close(): the final drain fails, and so does close.
        FaultyOutputStream sink = new FaultyOutputStream();
        sink.failWriteAt = 0;
        sink.failClose = true;
        GcmOutputStream out = gcm.encrypt(sink);
        out.write(plain, 0, 5000);
        IOException e = assertThrows(IOException.class, out::close);
        assertEquals("injected write failure", e.getMessage());
        assertEquals(1, e.getSuppressed().length, "the close failure is kept as suppressed");
        assertInstanceOf(IOException.class, e.getSuppressed()[0]);
        checkAfterClose(failures, "sink fails in close()", gcm, out, sink);

        // A failing flush poisons the stream the same way.
        FaultyOutputStream flaky = new FaultyOutputStream();
        flaky.failFlush = true;
        GcmOutputStream flushing = gcm.encrypt(flaky);
        flushing.write(plain, 0, 3 * CHUNK);
        assertThrows(IOException.class, flushing::flush);
        assertThrows(IOException.class, () -> flushing.write(plain, 0, 10));
        assertThrows(IOException.class, flushing::close);
        checkAfterClose(failures, "flush fails", gcm, flushing, flaky);

        assertTrue(failures.isEmpty(), CtrFixtures.report(failures));
    }
}
