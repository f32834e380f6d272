package io.sealpipe.cli;

import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Hmac;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.snappy.SnappyStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * What {@code sealpipe speed} measures: one workload per mode, engine and size, timed in a
 * loop in this thread (the streams with parallelism 1, like {@code openssl speed}'s one
 * process). Not a replacement for the JMH suites in src/jmh, which fork, warm up for seconds and
 * report errors; these loops give a table in a minute.
 */
final class SpeedWorkloads {
    private SpeedWorkloads() {}

    /** The table's rows, with the names {@code --mode} and the JSON output use. */
    enum Mode {
        GCM_STREAM("gcm-stream", "GCM stream (Cobblestone-256), write", Operation.GCM_SEAL),
        CTR_STREAM("ctr-stream", "CTR stream (Hadoop format), write", Operation.CTR),
        GCM("gcm", "AES-256-GCM seal, one message per call", Operation.GCM_SEAL),
        CTR("ctr", "AES-256-CTR", Operation.CTR),
        CFB("cfb", "AES-256-CFB128", Operation.CFB),
        HMAC_SHA256("hmac-sha256", "HMAC-SHA256, one MAC per call", Operation.HMAC_SHA256),
        CFB_HMAC_SHA256("cfb+hmac-sha256", "AES-256-CFB128, then HMAC-SHA256 of the ciphertext", Operation.CFB,
                Operation.HMAC_SHA256),
        SNAPPY_GCM_WRITE("snappy+gcm-write", "Snappy framing, then GCM stream: write path, text-like data",
                Operation.GCM_SEAL),
        GCM_SNAPPY_READ("gcm+snappy-read", "GCM stream, then Snappy framing: read path, text-like data",
                Operation.GCM_OPEN),
        /** Not a row of the table: CTR stream decryption, for the AES-NI on/off seed. */
        CTR_STREAM_READ("ctr-stream-read", "CTR stream (Hadoop format), read", Operation.CTR);

        final String id;
        final String description;
        /** The operations whose speed the row measures (gcm+snappy-read also seals its input once). */
        final List<Operation> operations;

        Mode(String id, String description, Operation... operations) {
            this.id = id;
            this.description = description;
            this.operations = List.of(operations);
        }

        /** What {@code kind} lacks of this mode's operations, or null when it has them all. */
        String lackedBy(EngineKind kind) {
            for (Operation op : operations) {
                if (!kind.supports(op)) {
                    return kind.id() + " has no " + op.id();
                }
            }
            return null;
        }

        static final Mode[] TABLE = Arrays.copyOf(values(), values().length - 1);

        static Mode fromId(String id) {
            for (Mode m : values()) {
                if (m.id.equals(id.toLowerCase(Locale.ROOT))) {
                    return m;
                }
            }
            throw new IllegalArgumentException(id);
        }
    }

    /** The table's columns, in bytes per call. */
    static final int[] SIZES = {256, 16 * 1024, 1024 * 1024};

    /** Text-like data for the Snappy modes, made once (16 MiB, the pipeline tests' generator). */
    private static byte[] text;

    static synchronized byte[] text() {
        if (text == null) {
            text = TextLikeData.generate(1, 16 << 20);
        }
        return text;
    }

    /** One call of a workload: {@code size} bytes through it. */
    interface Op extends AutoCloseable {
        void run() throws IOException, GeneralSecurityException;

        @Override
        void close() throws IOException;
    }

    /** A workload of {@code mode} on {@code engine} with {@code size}-byte calls. */
    static Op create(Mode mode, CryptoEngine engine, int size) throws GeneralSecurityException, IOException {
        SplittableRandom random = new SplittableRandom(size);
        byte[] key = new byte[32];
        random.nextBytes(key);
        byte[] iv = new byte[16];
        random.nextBytes(iv);
        byte[] in = new byte[size];
        random.nextBytes(in);
        byte[] out = new byte[size + 16];
        return switch (mode) {
            case GCM_STREAM -> writer(GcmStreams.builder().key(key).engine(engine).parallelism(1).build()::encrypt, in);
            case CTR_STREAM -> writer(CtrStreams.builder().key(key).iv(iv).engine(engine).parallelism(1).build()::encrypt,
                    in);
            case SNAPPY_GCM_WRITE -> textWriter(snappyGcm(key, engine), size);
            case GCM_SNAPPY_READ -> textReader(snappyGcm(key, engine), size);
            case CTR_STREAM_READ -> ctrReader(CtrStreams.builder().key(key).iv(iv).engine(engine).parallelism(1).build(),
                    size);
            case GCM -> {
                AeadCipher gcm = engine.newAesGcm(key);
                byte[] nonce = new byte[12];
                long[] counter = {0};
                yield op(() -> {
                    long c = ++counter[0];
                    for (int i = 0; i < 8; i++) {
                        nonce[11 - i] = (byte) (c >>> (8 * i));
                    }
                    gcm.seal(nonce, null, in, 0, size, out, 0);
                }, gcm::close);
            }
            case CTR -> {
                StreamCipher ctr = engine.newAesCtr(key, iv);
                yield op(() -> ctr.update(in, 0, size, out, 0), ctr::close);
            }
            case CFB -> {
                StreamCipher cfb = engine.newAesCfb(key, iv, true);
                yield op(() -> cfb.update(in, 0, size, out, 0), cfb::close);
            }
            case HMAC_SHA256 -> {
                Hmac hmac = engine.newHmacSha256(key);
                byte[] mac = new byte[32];
                yield op(() -> {
                    hmac.update(in, 0, size);
                    hmac.doFinal(mac, 0);
                }, hmac::close);
            }
            case CFB_HMAC_SHA256 -> {
                StreamCipher cfb = engine.newAesCfb(key, iv, true);
                Hmac hmac = engine.newHmacSha256(key);
                byte[] mac = new byte[32];
                yield op(() -> {
                    cfb.update(in, 0, size, out, 0);
                    hmac.update(out, 0, size);
                    hmac.doFinal(mac, 0);
                }, () -> {
                    cfb.close();
                    hmac.close();
                });
            }
        };
    }

    private interface Body {
        void run() throws IOException, GeneralSecurityException;
    }

    private interface Release {
        void run() throws IOException;
    }

    private static Op op(Body body, Release release) {
        return new Op() {
            @Override
            public void run() throws IOException, GeneralSecurityException {
                body.run();
            }

            @Override
            public void close() throws IOException {
                release.run();
            }
        };
    }

    private interface Wrap {
        OutputStream wrap(OutputStream out) throws IOException;
    }

    /** Writes {@code in} to one long-lived stream into a sink that only counts. */
    private static Op writer(Wrap wrap, byte[] in) throws IOException {
        OutputStream out = wrap.wrap(OutputStream.nullOutputStream());
        return op(() -> out.write(in, 0, in.length), out::close);
    }

    /** The pipeline: Snappy framing over the GCM stream, both with parallelism 1. */
    private record Pipeline(SnappyStreams snappy, GcmStreams gcm) {
        OutputStream writer(OutputStream to) {
            return snappy.compress(gcm.encrypt(to));
        }

        InputStream reader(InputStream from) {
            return snappy.decompress(gcm.decrypt(from));
        }
    }

    private static Pipeline snappyGcm(byte[] key, CryptoEngine engine) {
        return new Pipeline(SnappyStreams.builder().parallelism(1).build(),
                GcmStreams.builder().key(key).engine(engine).parallelism(1).build());
    }

    /** Writes the text corpus, {@code size} bytes a call, round and round. */
    private static Op textWriter(Pipeline p, int size) throws IOException {
        byte[] corpus = text();
        OutputStream out = p.writer(OutputStream.nullOutputStream());
        int[] pos = {0};
        return op(() -> {
            if (pos[0] + size > corpus.length) {
                pos[0] = 0;
            }
            out.write(corpus, pos[0], size);
            pos[0] += size;
        }, out::close);
    }

    /** Reads the encrypted text corpus, {@code size} bytes a call; a new stream at its end. */
    private static Op textReader(Pipeline p, int size) throws IOException {
        ByteArrayOutputStream sealed = new ByteArrayOutputStream(text().length);
        try (OutputStream o = p.writer(sealed)) {
            o.write(text());
        }
        return reader(sealed.toByteArray(), p::reader, size);
    }

    /** Reads a CTR ciphertext of 16 MiB, {@code size} bytes a call; a new stream at its end. */
    private static Op ctrReader(CtrStreams ctr, int size) throws IOException {
        byte[] sealed = new byte[16 << 20];
        new SplittableRandom(7).nextBytes(sealed); // CTR decrypts anything: the work is the same
        return reader(sealed, ctr::decrypt, size);
    }

    private interface Open {
        InputStream open(InputStream from) throws IOException;
    }

    private static Op reader(byte[] sealed, Open open, int size) throws IOException {
        byte[] dst = new byte[size];
        InputStream[] in = {open.open(new java.io.ByteArrayInputStream(sealed))};
        return op(() -> {
            for (int done = 0; done < size; ) {
                int n = in[0].read(dst, done, size - done);
                if (n < 0) {
                    in[0].close();
                    in[0] = open.open(new java.io.ByteArrayInputStream(sealed));
                    continue;
                }
                done += n;
            }
        }, () -> in[0].close());
    }

    /**
     * Runs {@code op} for about {@code warmupNanos}, then {@code repeats} times for about
     * {@code measureNanos} each, and returns the median throughput in MB/s (10^6 bytes/s).
     * Calls are timed in batches of about a millisecond, so the clock is read rarely.
     */
    static double measure(Op op, int size, long warmupNanos, long measureNanos, int repeats)
            throws IOException, GeneralSecurityException {
        long batch = 1;
        long start = System.nanoTime();
        long calls = 0;
        do {
            for (long i = 0; i < batch; i++) {
                op.run();
            }
            calls += batch;
            long elapsed = System.nanoTime() - start;
            if (elapsed < 1_000_000) {
                batch *= 2;
            }
        } while (System.nanoTime() - start < warmupNanos);
        long perCall = Math.max(1, (System.nanoTime() - start) / calls);
        batch = Math.max(1, 1_000_000 / perCall);
        double[] results = new double[repeats];
        for (int r = 0; r < repeats; r++) {
            long n = 0;
            long t0 = System.nanoTime();
            long t;
            do {
                for (long i = 0; i < batch; i++) {
                    op.run();
                }
                n += batch;
                t = System.nanoTime() - t0;
            } while (t < measureNanos);
            results[r] = (double) n * size / (t / 1e9) / 1e6;
        }
        Arrays.sort(results);
        return results[repeats / 2];
    }
}
