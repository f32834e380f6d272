package io.sealpipe.soak;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The soak's fixed data, made once from the seed: the engines, the keys, and the messages, each
 * a plaintext with its chunked GCM and AES-CTR ciphertexts in memory (heap and direct) and in
 * files. The CTR ciphertexts come from the JDK's own {@code AES/CTR/NoPadding} (SunJCE), not
 * from sealpipe, so a CTR writer's output is checked against an independent reference. Each
 * GCM ciphertext is sealed by a different engine in turn, and read by all of them.
 */
final class SoakData {
    /**
     * Plaintext sizes: empty, one byte, a chunk less and more one byte, past the first MiB (where
     * workers join), 5 MiB.
     */
    static final int[] SIZES = {0, 1, 16 * 1024 - 1, 16 * 1024 + 1, (1 << 20) + 3, 5 << 20};

    /** The engines the soak mixes, where available. */
    static final List<EngineKind> KINDS = List.of(EngineKind.OPENSSL_JNI, EngineKind.OPENSSL_JNA, EngineKind.JCE);

    final long seed;
    final byte[] gcmKey;
    final byte[] ctrKey;
    final List<CountingEngine> engines;
    final List<String> unavailable;
    final Message[] messages;

    /** One plaintext and what it encrypts to. */
    static final class Message {
        final int index;
        final byte[] plain;
        final byte[] gcm;
        final ByteBuffer gcmDirect; // read-only: duplicate() before use
        final Path gcmFile;
        final byte[] iv;
        final byte[] ctr;
        final ByteBuffer ctrDirect;
        final Path ctrFile;

        Message(int index, byte[] plain, byte[] gcm, Path gcmFile, byte[] iv, byte[] ctr, Path ctrFile) {
            this.index = index;
            this.plain = plain;
            this.gcm = gcm;
            this.gcmDirect = direct(gcm);
            this.gcmFile = gcmFile;
            this.iv = iv;
            this.ctr = ctr;
            this.ctrDirect = direct(ctr);
            this.ctrFile = ctrFile;
        }

        int size() {
            return plain.length;
        }

        @Override
        public String toString() {
            return "message " + index + " (" + plain.length + " bytes)";
        }

        private static ByteBuffer direct(byte[] b) {
            ByteBuffer d = ByteBuffer.allocateDirect(Math.max(1, b.length));
            d.put(b).flip();
            return d.asReadOnlyBuffer();
        }
    }

    private SoakData(long seed, List<CountingEngine> engines, List<String> unavailable, Path dir) throws IOException {
        this.seed = seed;
        this.engines = engines;
        this.unavailable = unavailable;
        SplittableRandom random = new SplittableRandom(seed);
        this.gcmKey = bytes(random, 32);
        this.ctrKey = bytes(random, 32);
        this.messages = new Message[SIZES.length];
        for (int i = 0; i < SIZES.length; i++) {
            byte[] plain = bytes(new SplittableRandom(seed * 31 + i), SIZES[i]);
            CountingEngine sealer = engines.get(i % engines.size());
            ByteArrayOutputStream sink = new ByteArrayOutputStream(plain.length + 1024);
            GcmStreams sealing = GcmStreams.builder().key(gcmKey).engine(sealer).parallelism(1 + i % 2).build();
            try (OutputStream out = sealing.encrypt(sink)) {
                out.write(plain);
            } finally {
                sealing.destroy();
            }
            byte[] gcm = sink.toByteArray();
            // The counter's low 64 bits carry 3 * i + 1 blocks in: a 64-bit counter would break there.
            byte[] iv = bytes(random, 16);
            long low = -1L - 3L * i;
            for (int b = 0; b < 8; b++) {
                iv[15 - b] = (byte) (low >>> (8 * b));
            }
            byte[] ctr = referenceCtr(ctrKey, iv, plain);
            Path gcmFile = Files.write(dir.resolve("gcm-" + i + ".bin"), gcm);
            Path ctrFile = Files.write(dir.resolve("ctr-" + i + ".bin"), ctr);
            messages[i] = new Message(i, plain, gcm, gcmFile, iv, ctr, ctrFile);
        }
    }

    /**
     * The data for {@code seed}, its files in {@code dir}. Under {@code CI=true} every engine of
     * {@link #KINDS} must load; elsewhere those that do not are left out (and listed).
     */
    static SoakData create(Path dir, long seed) throws IOException {
        List<CountingEngine> engines = new ArrayList<>();
        List<String> unavailable = new ArrayList<>();
        boolean ci = TestEngines.inCi();
        for (EngineKind kind : KINDS) {
            EngineStatus status = Engines.report().status(kind);
            if (status.available()) {
                engines.add(new CountingEngine(Engines.get(kind)));
            } else if (ci) {
                throw new IllegalStateException(kind.id() + " must load in CI: " + status.reason());
            } else {
                unavailable.add(kind.id() + ": " + status.reason());
            }
        }
        if (engines.isEmpty()) {
            throw new IllegalStateException("no engine of " + KINDS + " is available: " + unavailable);
        }
        return new SoakData(seed, engines, unavailable, dir);
    }

    /** Ciphers made and not closed, over every engine. */
    long openCiphers() {
        return engines.stream().mapToLong(CountingEngine::open).sum();
    }

    long ciphersMade() {
        return engines.stream().mapToLong(CountingEngine::made).sum();
    }

    String engineIds() {
        return String.join(",", engines.stream().map(e -> e.kind().id()).toList());
    }

    static byte[] bytes(SplittableRandom random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** The JDK's AES-CTR (SunJCE, 128-bit big-endian counter): what Hadoop's streams write. */
    private static byte[] referenceCtr(byte[] key, byte[] iv, byte[] plain) {
        try {
            Cipher c = Cipher.getInstance("AES/CTR/NoPadding", "SunJCE");
            c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
            return plain.length == 0 ? new byte[0] : c.doFinal(plain);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK's AES/CTR/NoPadding is needed for the reference ciphertexts", e);
        }
    }
}
