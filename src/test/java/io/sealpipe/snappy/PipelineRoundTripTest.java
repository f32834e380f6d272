package io.sealpipe.snappy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.CtrFixtures;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmInternals;
import io.sealpipe.gcm.GcmRoundTripTest;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.TextLikeData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Compress-then-encrypt and decrypt-then-decompress round trips with fixed seeds: both modes ×
 * compression on and off × parallelism 1, 2 and 4 × sizes from 0 to 20 MiB of text-like and
 * random data, written in several patterns. Whatever the parallelism, the ciphertext must be
 * byte for byte the sequential one (GCM with a fixed salt).
 */
public class PipelineRoundTripTest {
    static final int[] SIZES = {0, 1, 16384, 65535, 65536, 65537, (1 << 20) + 3, 3 << 20, 20 << 20};
    static final int[] PARALLELISM = {1, 2, 4};

    enum Data { TEXT, RANDOM }

    public enum Writes { ONE_WRITE, WRITES_16K, MIXED_WITH_FLUSHES }

    static Stream<Arguments> cases() {
        return Stream.of(Pipeline.Mode.values()).flatMap(mode -> Stream.of(true, false).flatMap(compress ->
                Arrays.stream(SIZES).boxed().flatMap(size -> Stream.of(Data.values())
                        .map(data -> Arguments.of(mode, compress, size, data)))));
    }

    static byte[] data(Data kind, int size) {
        if (kind == Data.TEXT) {
            return TextLikeData.generate(size, size);
        }
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    @ParameterizedTest(name = "{0}, compress {1}, {2} bytes of {3}")
    @MethodSource("cases")
    void parallelWritesTheSameBytesAndEverythingReadsBack(Pipeline.Mode mode, boolean compress, int size, Data kind)
            throws IOException {
        byte[] plain = data(kind, size);
        Writes writes = Writes.values()[size % Writes.values().length];
        byte[] sequential = Pipeline.of(mode, compress, 1).encrypt(plain, writes);
        for (int parallelism : PARALLELISM) {
            Pipeline p = Pipeline.of(mode, compress, parallelism);
            if (parallelism > 1) {
                assertArrayEquals(sequential, p.encrypt(plain, writes),
                        "parallelism " + parallelism + " must write the sequential bytes (" + writes + ")");
            }
            assertArrayEquals(plain, p.decrypt(sequential, 1 << 20), "parallelism " + parallelism + ", 1 MiB reads");
            assertArrayEquals(plain, p.decrypt(sequential, 7000), "parallelism " + parallelism + ", 7000-byte reads");
        }
        if (compress && kind == Data.TEXT && size >= 1 << 20) {
            int overhead = mode == Pipeline.Mode.GCM ? (int) GcmRoundTripTest.expectedLength(0) : 0;
            assertTrue(sequential.length - overhead < size * 0.75, "text should compress: " + sequential.length
                    + " bytes from " + size);
        }
    }

    @Test
    void oneByteWritesAndReads() throws IOException {
        byte[] plain = data(Data.TEXT, 200_000);
        for (Pipeline.Mode mode : Pipeline.Mode.values()) {
            for (int parallelism : PARALLELISM) {
                Pipeline p = Pipeline.of(mode, true, parallelism);
                ByteArrayOutputStream sink = new ByteArrayOutputStream();
                try (OutputStream out = p.output(sink)) {
                    for (byte b : plain) {
                        out.write(b);
                    }
                }
                assertArrayEquals(Pipeline.of(mode, true, 1).encrypt(plain, Writes.ONE_WRITE), sink.toByteArray());
                ByteArrayOutputStream back = new ByteArrayOutputStream();
                try (InputStream in = p.input(new ByteArrayInputStream(sink.toByteArray()))) {
                    for (int c; (c = in.read()) >= 0; ) {
                        back.write(c);
                    }
                }
                assertArrayEquals(plain, back.toByteArray(), mode + " parallelism " + parallelism);
            }
        }
    }

    @AfterAll
    static void noWorkerOutlivesItsStreams() throws InterruptedException {
        PipelineFailureTest.assertWorkersEnd();
    }

    /** One configuration of the pipeline, with the same key, IV or salt every time. */
    public record Pipeline(Mode mode, boolean compress, int parallelism) {
        public enum Mode { GCM, CTR }

        static final byte[] KEY = CtrFixtures.bytes(7, 32);
        static final byte[] IV = CtrFixtures.bytes(8, 16);
        static final byte[] SALT = CtrFixtures.bytes(9, 24);

        public static Pipeline of(Mode mode, boolean compress, int parallelism) {
            return new Pipeline(mode, compress, parallelism);
        }

        public GcmStreams gcm() {
            return GcmInternals.fixedSalt(GcmStreams.builder().key(KEY).context("shuffle_1_2_3".getBytes()), SALT)
                    .parallelism(parallelism).build();
        }

        CtrStreams ctr() {
            return CtrStreams.builder().key(KEY).iv(IV).parallelism(parallelism).build();
        }

        SnappyStreams snappy() {
            return SnappyStreams.builder().parallelism(parallelism).build();
        }

        public OutputStream output(OutputStream sink) {
            OutputStream encrypting = mode == Mode.GCM ? gcm().encrypt(sink) : ctr().encrypt(sink);
            return compress ? snappy().compress(encrypting) : encrypting;
        }

        public InputStream input(InputStream source) {
            InputStream decrypting = mode == Mode.GCM ? gcm().decrypt(source) : ctr().decrypt(source);
            return compress ? snappy().decompress(decrypting) : decrypting;
        }

        public byte[] encrypt(byte[] plain, Writes writes) throws IOException {
            ByteArrayOutputStream sink = new ByteArrayOutputStream();
            try (OutputStream out = output(sink)) {
                switch (writes) {
                    case ONE_WRITE -> out.write(plain);
                    case WRITES_16K -> {
                        for (int off = 0; off < plain.length; off += 16384) {
                            out.write(plain, off, Math.min(16384, plain.length - off));
                        }
                    }
                    case MIXED_WITH_FLUSHES -> {
                        Random r = new Random(plain.length);
                        for (int off = 0, i = 0; off < plain.length; i++) {
                            int n = Math.min(plain.length - off, i % 3 == 0 ? 1 + r.nextInt(300) : r.nextInt(400_000));
                            out.write(plain, off, n);
                            off += n;
                            if (i % 5 == 4) {
                                out.flush();
                            }
                        }
                    }
                    default -> throw new IllegalArgumentException(writes.toString());
                }
            }
            return sink.toByteArray();
        }

        public byte[] decrypt(byte[] sealed, int readSize) throws IOException {
            ByteArrayOutputStream back = new ByteArrayOutputStream();
            byte[] buffer = new byte[readSize];
            try (InputStream in = input(new ByteArrayInputStream(sealed))) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    back.write(buffer, 0, n);
                }
                assertEquals(-1, in.read());
            }
            return back.toByteArray();
        }
    }
}
