package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ctr.CryptoInputStream;
import io.sealpipe.ctr.CryptoOutputStream;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import io.sealpipe.gcm.GcmInputStream;
import io.sealpipe.gcm.GcmInternals;
import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import javax.crypto.SecretKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Where key material lives and for how long. {@code destroy()} of {@link GcmStreams} and
 * {@link CtrStreams} never breaks a stream already made, and once everything is destroyed or
 * closed, no object of ours still holds the input key or a message key: the object graphs of
 * instances, builders and closed streams are walked field by field (ours reflectively; a JCE key
 * object through its public {@code getEncoded()}, unless destroyed) and every byte array and
 * buffer is searched. What the JCE provider keeps inside its own objects is out of reach here;
 * {@link KeyHeapScanTest} looks at the whole heap for that.
 */
public class KeyLifetimeTest {
    private static final byte[] CONTEXT = {'c', 't', 'x'};

    private static byte[] bytes(long seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static GcmStreams gcm(CryptoEngine engine, byte[] key) {
        return GcmStreams.builder().engine(engine).key(key).context(CONTEXT).build();
    }

    private static byte[] encrypt(GcmStreams gcm, byte[] plain) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GcmOutputStream s = gcm.encrypt(out)) {
            s.write(plain);
        }
        return out.toByteArray();
    }

    /** The message key a ciphertext was sealed with, from its salt. */
    private static byte[] messageKey(byte[] key, byte[] ciphertext) {
        return GcmInternals.messageKey(key, Arrays.copyOf(ciphertext, GcmInternals.SALT_LENGTH), CONTEXT);
    }

    /**
     * The class comment of GcmStreams promises that streams already made keep working after
     * destroy(). A decrypting stream derives its message key at its first read, so it must have
     * taken its own copy of the input key when it was made (before: IllegalStateException).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void destroyAfterDecryptButBeforeTheFirstReadStillDecrypts(EngineKind kind) throws IOException {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] plain = bytes(1, 40_000);
        GcmStreams writer = gcm(engine, bytes(2, 32));
        byte[] ciphertext = encrypt(writer, plain);

        GcmStreams gcm = gcm(engine, bytes(2, 32));
        GcmInputStream fromStream = gcm.decrypt(new ByteArrayInputStream(ciphertext));
        GcmInputStream fromChannel = gcm.decrypt(Channels.newChannel(new ByteArrayInputStream(ciphertext)));
        GcmInputStream fromMemory = gcm.decrypt(ByteBuffer.wrap(ciphertext));
        GcmInputStream unread = gcm.decrypt(new ByteArrayInputStream(ciphertext));
        gcm.destroy();

        for (InputStream in : List.of(fromStream, fromChannel, fromMemory)) {
            try (in) {
                assertArrayEquals(plain, in.readAllBytes());
            }
        }
        unread.close(); // never read: its copy of the input key goes with close()
        assertThrows(IllegalStateException.class, () -> gcm.decrypt(new ByteArrayInputStream(ciphertext)),
                "a destroyed instance makes no new stream");
        writer.destroy();
    }

    /** The same promise at parallelism 2, where the workers' ciphers are made after the first MiB. */
    @Test
    void destroyBeforeTheFirstReadAtParallelismTwo() throws IOException {
        byte[] plain = bytes(3, (1 << 20) + 3 * GcmInternals.CHUNK_SIZE + 5);
        GcmStreams gcm = GcmStreams.builder().engine(EngineKind.JCE).key(bytes(4, 16)).parallelism(2).build();
        byte[] ciphertext = encrypt(gcm, plain);
        GcmInputStream in = gcm.decrypt(new ByteArrayInputStream(ciphertext));
        gcm.destroy();
        try (in) {
            assertArrayEquals(plain, in.readAllBytes());
        }
    }

    /**
     * A key given as bytes is copied once, and that copy is the built instance's own: after its
     * destroy() neither the instance nor the builder holds the key (before, the builder kept a
     * second copy that nothing wiped). Later builds copy it from the first instance.
     */
    @Test
    void aGcmKeyGivenAsBytesGoesToTheInstanceAndIsWipedWithIt() throws IOException {
        byte[] key = bytes(5, 32);
        GcmStreams.Builder builder = GcmStreams.builder().engine(EngineKind.JCE).key(key.clone());
        GcmStreams first = builder.build();
        GcmStreams second = builder.build();
        first.destroy();
        assertNoCopies(key, List.of(first, builder));
        byte[] plain = bytes(6, 1000);
        assertArrayEquals(plain, second.decrypt(new ByteArrayInputStream(encrypt(second, plain))).readAllBytes(),
                "an instance built later has a copy of its own");
        IllegalStateException e = assertThrows(IllegalStateException.class, builder::build);
        assertTrue(e.getMessage().contains("key(...) again"), e.getMessage());
        second.destroy();
        assertNoCopies(key, List.of(second));
        assertTrue(builder.key(key).build().formatName().endsWith("256"), "a key given again builds");
    }

    @Test
    void aCtrKeyGivenAsBytesGoesToTheInstanceAndIsWipedWithIt() {
        byte[] key = bytes(7, 24);
        CtrStreams.Builder builder = CtrStreams.builder().engine(EngineKind.JCE).key(key.clone()).iv(new byte[16]);
        CtrStreams first = builder.build();
        CtrStreams second = builder.build();
        CtrStreams third = first.withIv(bytes(8, 16));
        first.destroy();
        assertNoCopies(key, List.of(first, builder));
        IllegalStateException e = assertThrows(IllegalStateException.class, builder::build);
        assertTrue(e.getMessage().contains("key(...) again"), e.getMessage());
        second.destroy();
        third.destroy();
        assertNoCopies(key, List.of(second, third));
    }

    /**
     * Closed streams and channels keep neither the input key nor the message key, on every
     * engine: on JCE that covers the key objects the ciphers keep for their next init (before, a
     * {@code SecretKeySpec} that nothing could wipe).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#kinds")
    void closedGcmStreamsKeepNoKey(EngineKind kind) throws IOException {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] key = bytes(9, 32);
        byte[] plain = bytes(10, 3 * GcmInternals.CHUNK_SIZE + 7);
        GcmStreams gcm = gcm(engine, key);
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        GcmOutputStream out = gcm.encrypt(sink);
        out.write(plain);
        out.close();
        byte[] ciphertext = sink.toByteArray();
        GcmInputStream read = gcm.decrypt(new ByteArrayInputStream(ciphertext));
        assertArrayEquals(plain, read.readAllBytes());
        read.close();
        GcmInputStream unread = gcm.decrypt(ByteBuffer.wrap(ciphertext));
        unread.close();
        GcmSeekableChannel channel = gcm.open(new MemorySeekableChannel(ciphertext, 1000));
        ByteBuffer middle = ByteBuffer.allocate(100);
        channel.read(middle, 20_000);
        channel.close();
        gcm.destroy();

        List<Object> closed = List.of(gcm, out, read, unread, channel);
        assertNoCopies(key, closed);
        assertNoCopies(messageKey(key, ciphertext), closed);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void closedCtrStreamsKeepNoKey(EngineKind kind) throws IOException {
        CryptoEngine engine = TestEngines.engine(kind);
        byte[] key = bytes(11, 32);
        CtrStreams ctr = CtrStreams.builder().engine(engine).key(key).iv(new byte[16]).parallelism(2).build();
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        CryptoOutputStream out = ctr.encrypt(sink);
        out.write(bytes(12, 600_000)); // large enough for the helpers' ciphers
        out.close();
        CryptoInputStream in = ctr.decrypt(ByteBuffer.wrap(sink.toByteArray()));
        in.readNBytes(600_000);
        in.readFully(1000, new byte[10]); // a positioned read has a cipher of its own
        in.close();
        ctr.destroy();
        assertNoCopies(key, List.of(ctr, out, in));
    }

    // ---- the walk ----

    /** No object reachable from {@code roots} (ours field by field, see the class comment) holds {@code secret}. */
    public static void assertNoCopies(byte[] secret, List<?> roots) {
        List<String> found = new ArrayList<>();
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        for (Object root : roots) {
            walk(root, root.getClass().getSimpleName(), secret, seen, found);
        }
        assertEquals(List.of(), found, "copies of the key still held");
    }

    private static void walk(Object o, String path, byte[] secret, IdentityHashMap<Object, Boolean> seen,
            List<String> found) {
        if (o == null || o instanceof Enum<?> || seen.put(o, Boolean.TRUE) != null) {
            return;
        }
        if (o instanceof byte[] b) {
            check(b, path, secret, found);
        } else if (o instanceof ByteBuffer buffer) {
            byte[] content = new byte[buffer.capacity()];
            buffer.duplicate().clear().get(content);
            check(content, path, secret, found);
        } else if (o instanceof SecretKey k) {
            if (!k.isDestroyed()) { // SecretKeySpec says false: it cannot be destroyed
                byte[] encoded = k.getEncoded();
                check(encoded, path + " (" + k.getClass().getName() + ")", secret, found);
                Arrays.fill(encoded, (byte) 0);
            }
        } else if (o instanceof Object[] array) {
            for (int i = 0; i < array.length; i++) {
                walk(array[i], path + "[" + i + "]", secret, seen, found);
            }
        } else if (o.getClass().getName().startsWith("io.sealpipe.")) {
            for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                        continue;
                    }
                    f.setAccessible(true);
                    try {
                        walk(f.get(o), path + "." + f.getName(), secret, seen, found);
                    } catch (IllegalAccessException e) {
                        throw new AssertionError(e);
                    }
                }
            }
        } else if (o instanceof Iterable<?> items && o.getClass().getName().startsWith("java.util.")) {
            int i = 0;
            for (Object item : items) {
                walk(item, path + "{" + i++ + "}", secret, seen, found);
            }
        }
        // Anything else (the JDK's and providers' objects) is not ours to wipe.
    }

    private static void check(byte[] b, String path, byte[] secret, List<String> found) {
        outer:
        for (int i = 0; i + secret.length <= b.length; i++) {
            for (int j = 0; j < secret.length; j++) {
                if (b[i + j] != secret[j]) {
                    continue outer;
                }
            }
            found.add(path + " at " + i);
            return;
        }
    }
}
