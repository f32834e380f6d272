package io.sealpipe;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.sealpipe.ctr.CryptoInputStream;
import io.sealpipe.ctr.CryptoOutputStream;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Hmac;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.gcm.GcmInputStream;
import io.sealpipe.gcm.GcmInternals;
import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The child JVM of {@link KeyHeapScanTest}: on every engine that loads, uses keys the way an
 * application does (GCM and CTR streams built from key bytes, every kind of stream, then
 * everything closed and destroyed; AES-CFB and HMAC straight from the engine), wipes its own key
 * arrays, and writes a heap dump of all objects, collected or not, to {@code args[0]}. It prints
 * {@code engines: } and the ids of the engines it ran. It also drops, unwiped, a canary key that the test must find.
 * Run it with Epsilon GC, which never collects, so that the dump
 * holds every array that was ever allocated: a key copy dropped without being wiped is found
 * whatever the timing.
 */
public final class KeyHeapScanChild {
    static final byte[] CONTEXT = {'h', 'e', 'a', 'p'};

    private KeyHeapScanChild() {}

    /** The key of one use on one engine, the same in the child and the test. */
    static byte[] key(String use, EngineKind kind, int length) {
        byte[] key = new byte[length];
        new Random((use + "/" + kind.id()).hashCode()).nextBytes(key);
        return key;
    }

    static byte[] salt(EngineKind kind) {
        return key("salt", kind, GcmInternals.SALT_LENGTH);
    }

    public static void main(String[] args) throws Exception {
        List<String> ran = new ArrayList<>();
        for (EngineKind kind : EngineKind.values()) {
            if (Engines.report().status(kind).available()) {
                run(kind, Engines.get(kind));
                ran.add(kind.id());
            }
        }
        dropWithoutWiping(key("canary", EngineKind.JCE, 32)); // the test must find this one
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(args[0], false);
        System.out.println("engines: " + String.join(",", ran));
    }

    private static void run(EngineKind kind, CryptoEngine engine) throws IOException, GeneralSecurityException {
        byte[] plain = new byte[3 * GcmInternals.CHUNK_SIZE + 100];
        new Random(1).nextBytes(plain);

        byte[] key = key("gcm", kind, 32);
        GcmStreams gcm = GcmInternals.fixedSalt(GcmStreams.builder().engine(engine).key(key).context(CONTEXT), salt(kind)).build();
        Arrays.fill(key, (byte) 0);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (GcmOutputStream out = gcm.encrypt(sink)) {
            out.write(plain);
        }
        byte[] ciphertext = sink.toByteArray();
        GcmInputStream unread = gcm.decrypt(new ByteArrayInputStream(ciphertext));
        GcmInputStream fromMemory = gcm.decrypt(ByteBuffer.wrap(ciphertext));
        GcmSeekableChannel channel = gcm.open(new MemorySeekableChannel(ciphertext, 4096));
        gcm.destroy(); // before the streams are read: they keep working
        try (GcmInputStream in = fromMemory) {
            check(plain, in.readAllBytes());
        }
        unread.close();
        try (channel) {
            ByteBuffer middle = ByteBuffer.allocate(100);
            channel.read(middle, 20_000);
            check(Arrays.copyOfRange(plain, 20_000, 20_100), middle.array());
        }

        // Parallelism 2, past the point where helpers join in: the streams copy the message key
        // (GCM) or the key (CTR) for the helpers' ciphers. The keys come in as AesKey objects here.
        byte[] big = new byte[(2 << 20) + 100];
        new Random(2).nextBytes(big);
        key = key("gcm", kind, 32);
        AesKey gcmKey = AesKey.copyOf(key);
        Arrays.fill(key, (byte) 0);
        GcmStreams parallelGcm = GcmInternals.fixedSalt(GcmStreams.builder().engine(engine).key(gcmKey).context(CONTEXT),
                salt(kind)).parallelism(2).build();
        sink.reset();
        try (GcmOutputStream out = parallelGcm.encrypt(sink)) {
            out.write(big);
        }
        try (GcmInputStream in = parallelGcm.decrypt(new ByteArrayInputStream(sink.toByteArray()))) {
            check(big, in.readAllBytes());
        }
        parallelGcm.destroy();
        gcmKey.destroy();
        key = key("hmac", kind, 32);
        try (Hmac hmac = engine.newHmacSha256(key)) {
            Arrays.fill(key, (byte) 0);
            hmac.update(plain, 0, 1000);
            hmac.doFinal(new byte[32], 0);
        }
        if (!kind.supports(Operation.CTR)) {
            return; // accp: no CTR, no CFB
        }
        key = key("ctr", kind, 32);
        AesKey ctrKey = AesKey.copyOf(key);
        Arrays.fill(key, (byte) 0);
        CtrStreams parallelCtr = CtrStreams.builder().engine(engine).key(ctrKey).iv(new byte[16]).parallelism(2).build();
        sink.reset();
        try (CryptoOutputStream out = parallelCtr.encrypt(sink)) {
            out.write(big);
        }
        try (CryptoInputStream in = parallelCtr.decrypt(new ByteArrayInputStream(sink.toByteArray()))) {
            check(big, in.readAllBytes());
        }
        parallelCtr.destroy();
        ctrKey.destroy();

        key = key("ctr", kind, 32);
        CtrStreams ctr = CtrStreams.builder().engine(engine).key(key).iv(new byte[16]).build();
        Arrays.fill(key, (byte) 0);
        sink.reset();
        try (CryptoOutputStream out = ctr.encrypt(sink)) {
            out.write(plain);
        }
        try (CryptoInputStream in = ctr.decrypt(ByteBuffer.wrap(sink.toByteArray()))) {
            byte[] part = new byte[100];
            in.readFully(1000, part);
            check(Arrays.copyOfRange(plain, 1000, 1100), part);
            check(plain, in.readAllBytes());
        }
        ctr.destroy();

        key = key("cfb", kind, 16);
        try (StreamCipher cfb = engine.newAesCfb(key, new byte[16], true)) {
            Arrays.fill(key, (byte) 0);
            cfb.update(plain, 0, 1000, new byte[1000], 0);
        }
    }

    /** Garbage, never wiped: found in the dump only if the dump holds what was collected too. */
    private static void dropWithoutWiping(byte[] secret) {
        secret[0] ^= 0; // used, so that it is really allocated
    }

    private static void check(byte[] expected, byte[] actual) {
        if (!Arrays.equals(expected, actual)) {
            throw new AssertionError("decryption differs from the plaintext");
        }
    }
}
