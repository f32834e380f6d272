package io.sealpipe.ctr;

import static io.sealpipe.CtrFixtures.HEX;
import static io.sealpipe.CtrFixtures.bytes;
import static io.sealpipe.CtrFixtures.key;
import static io.sealpipe.CtrFixtures.referenceCtr;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.AesKey;
import io.sealpipe.CtrFixtures;
import io.sealpipe.CtrFixtures.MemoryChannel;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link CtrStreams.Builder}: every bad parameter is rejected with a message naming the value;
 * key and IV are copied in; destroy() zeroes the parameters' key but open streams keep working;
 * an instance encrypts one stream only, and {@link CtrStreams#withIv} makes the next one.
 */
class CtrBuilderTest {

    @Test
    void aMissingKeyOrIvIsNamed() {
        IllegalStateException noKey = assertThrows(IllegalStateException.class,
                () -> CtrStreams.builder().iv(new byte[16]).build());
        assertTrue(noKey.getMessage().contains("key"), noKey.getMessage());
        IllegalStateException noIv = assertThrows(IllegalStateException.class,
                () -> CtrStreams.builder().key(new byte[16]).build());
        assertTrue(noIv.getMessage().contains("IV"), noIv.getMessage());
        assertThrows(IllegalStateException.class, () -> CtrStreams.builder().build());
    }

    @ParameterizedTest(name = "key of {0} bytes")
    @ValueSource(ints = {0, 1, 15, 17, 20, 31, 33, 64})
    void aKeyOfTheWrongLengthIsRejectedNamingTheLength(int length) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CtrStreams.builder().key(new byte[length]));
        assertTrue(e.getMessage().contains("16, 24 or 32") && e.getMessage().contains("not " + length), e.getMessage());
        IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class, () -> AesKey.copyOf(new byte[length]));
        assertTrue(e2.getMessage().contains("not " + length), e2.getMessage());
    }

    @ParameterizedTest(name = "IV of {0} bytes")
    @ValueSource(ints = {0, 8, 12, 15, 17, 32})
    void anIvOfTheWrongLengthIsRejectedNamingTheLength(int length) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CtrStreams.builder().iv(new byte[length]));
        assertTrue(e.getMessage().contains("iv") && e.getMessage().contains("16")
                && e.getMessage().contains("not " + length), e.getMessage());
    }

    @Test
    void nullKeyAndIvAreNamed() {
        NullPointerException key = assertThrows(NullPointerException.class, () -> CtrStreams.builder().key((byte[]) null));
        assertTrue(key.getMessage().contains("key"), key.getMessage());
        NullPointerException iv = assertThrows(NullPointerException.class, () -> CtrStreams.builder().iv(null));
        assertTrue(iv.getMessage().contains("iv"), iv.getMessage());
    }

    @ParameterizedTest(name = "streamOffset {0}")
    @ValueSource(longs = {-1, -16, -12345, Long.MIN_VALUE})
    void aNegativeStreamOffsetIsRejectedNamingIt(long offset) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CtrStreams.builder().streamOffset(offset));
        assertTrue(e.getMessage().contains("streamOffset") && e.getMessage().contains(Long.toString(offset)), e.getMessage());
    }

    @ParameterizedTest(name = "bufferSize {0}")
    @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 1, 16, 511})
    void aTinyBufferIsRejectedNamingItAndTheMinimum(int size) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CtrStreams.builder().bufferSize(size));
        assertTrue(e.getMessage().contains("bufferSize") && e.getMessage().contains("512")
                && e.getMessage().contains(Integer.toString(size)), e.getMessage());
    }

    @Test
    void theSmallestBufferAndOddSizesAreAccepted() throws IOException {
        for (int size : new int[] {CtrStreams.MIN_BUFFER_SIZE, 513, 1000, 4097}) {
            byte[] key = key(16);
            byte[] iv = new byte[16];
            CtrStreams ctr = CtrStreams.builder().engine(EngineKind.JCE).key(key).iv(iv).bufferSize(size).build();
            byte[] plain = bytes(size, 3 * size + 5);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (CryptoOutputStream s = ctr.encrypt(out)) {
                s.write(plain);
            }
            assertArrayEquals(referenceCtr(key, iv, 0, plain), out.toByteArray(), "bufferSize " + size);
        }
    }

    @Test
    void aDestroyedAesKeyIsRefused() {
        AesKey key = AesKey.copyOf(key(16));
        CtrStreams.Builder builder = CtrStreams.builder().key(key).iv(new byte[16]);
        key.destroy();
        IllegalStateException e = assertThrows(IllegalStateException.class, builder::build);
        assertTrue(e.getMessage().contains("destroyed"), e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void theEngineIsTheOneAskedFor(EngineKind kind) {
        TestEngines.engine(kind); // skips an engine unavailable here (outside CI)
        CtrStreams ctr = CtrStreams.builder().engine(kind).key(key(16)).iv(new byte[16]).build();
        assertEquals(kind, ctr.engine().kind());
    }

    /** accp has no AES-CTR: the builder says so when it is given, not the first write. */
    @Test
    void anEngineWithoutCtrIsRefusedByTheBuilder() {
        TestEngines.engine(EngineKind.ACCP);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CtrStreams.builder().engine(EngineKind.ACCP));
        assertEquals("accp has no AES-CTR: give CtrStreams another engine (Engines.auto() takes CTR from one that has it)",
                e.getMessage());
    }

    /** Changing the caller's key, IV or AesKey after building changes nothing. */
    @Test
    void keyAndIvAreCopiedIn() throws IOException {
        byte[] key = key(32);
        byte[] iv = HEX.parseHex("00112233445566778899aabbccddeeff");
        byte[] keyCopy = key.clone();
        byte[] ivCopy = iv.clone();
        AesKey aesKey = AesKey.copyOf(key);
        CtrStreams.Builder builder = CtrStreams.builder().engine(EngineKind.JCE).iv(iv);
        CtrStreams fromBytes = builder.key(key).build();
        CtrStreams fromAesKey = CtrStreams.builder().engine(EngineKind.JCE).iv(iv).key(aesKey).build();
        Arrays.fill(key, (byte) 0);
        Arrays.fill(iv, (byte) 0);
        aesKey.destroy();
        byte[] plain = bytes(1, 100);
        for (CtrStreams ctr : new CtrStreams[] {fromBytes, fromAesKey}) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try (CryptoOutputStream s = ctr.encrypt(out)) {
                s.write(plain);
            }
            assertArrayEquals(referenceCtr(keyCopy, ivCopy, 0, plain), out.toByteArray());
        }
    }

    @Test
    void toStringShowsNoKey() {
        byte[] key = HEX.parseHex("000102030405060708090a0b0c0d0e0f");
        CtrStreams ctr = CtrStreams.builder().engine(EngineKind.JCE).key(key).iv(new byte[16]).streamOffset(7).build();
        String s = ctr.toString();
        assertTrue(s.contains("AES-128") && s.contains("7"), s);
        assertFalse(s.toLowerCase().contains("0001020304"), s);
        assertFalse(AesKey.copyOf(key).toString().contains("0001020304"));
    }

    /**
     * Two streams with one key and IV would share their key stream: the second encrypt call on
     * an instance is refused, whichever overloads come first and second, and says what to do.
     */
    @ParameterizedTest(name = "first through a channel: {0}")
    @ValueSource(booleans = {false, true})
    void aSecondEncryptIsRefusedSayingWhatToDo(boolean channelFirst) throws IOException {
        byte[] key = key(16);
        byte[] iv = CtrFixtures.ivs().get("random");
        byte[] plain = bytes(5, 300);
        CtrStreams ctr = CtrStreams.builder().engine(EngineKind.JCE).key(key).iv(iv).build();
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        try (CryptoOutputStream out = channelFirst ? ctr.encrypt(Channels.newChannel(first)) : ctr.encrypt(first)) {
            out.write(plain);
        }
        assertArrayEquals(referenceCtr(key, iv, 0, plain), first.toByteArray());

        ByteArrayOutputStream second = new ByteArrayOutputStream();
        List<IllegalStateException> refusals = List.of(
                assertThrows(IllegalStateException.class, () -> ctr.encrypt(second)),
                assertThrows(IllegalStateException.class, () -> ctr.encrypt(Channels.newChannel(second))));
        for (IllegalStateException e : refusals) {
            String m = e.getMessage();
            assertTrue(m.contains("key and IV were already used") && m.contains("fresh random IV")
                    && m.contains("withIv"), m);
        }
        assertEquals(0, second.size(), "nothing written by the refused calls");

        // Decryption is not limited.
        for (int i = 0; i < 3; i++) {
            try (CryptoInputStream in = ctr.decrypt(new MemoryChannel(first.toByteArray()))) {
                assertArrayEquals(plain, in.readAllBytes());
            }
        }
    }

    /** Eight threads call encrypt at once: exactly one gets a stream. */
    @Test
    void concurrentEncryptCallsLetExactlyOneThrough() throws Exception {
        CtrStreams ctr = CtrStreams.builder().engine(EngineKind.JCE).key(key(16)).iv(new byte[16]).build();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Boolean>> calls = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                calls.add(pool.submit(() -> {
                    start.await();
                    try {
                        ctr.encrypt(new ByteArrayOutputStream()).close();
                        return true;
                    } catch (IllegalStateException refused) {
                        return false;
                    }
                }));
            }
            start.countDown();
            int streams = 0;
            for (Future<Boolean> call : calls) {
                streams += call.get(30, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertEquals(1, streams);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * withIv: the same key, engine and settings with the new IV, one more stream, refused again
     * after it; the IV it was made from is refused.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void withIvEncryptsOneMoreStreamWithTheSameKeyAndSettings(EngineKind kind) throws IOException {
        byte[] key = key(32);
        byte[] iv = CtrFixtures.ivs().get("random");
        byte[] nextIv = CtrFixtures.ivs().get("low64-ff");
        byte[] plain = bytes(6, 3000);
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(512).streamOffset(100).parallelism(1)
                .closeUnderlying(false).build();
        ctr.encrypt(new ByteArrayOutputStream()).close();

        CtrStreams next = ctr.withIv(nextIv);
        assertEquals(ctr.toString(), next.toString()); // engine, key size, buffer, stream offset, parallelism
        assertEquals(ctr.engine(), next.engine());
        MemoryChannel sink = new MemoryChannel(new byte[0]);
        try (CryptoOutputStream out = next.encrypt(sink)) {
            out.write(plain);
        }
        assertTrue(sink.isOpen(), "closeUnderlying(false) carried over");
        assertArrayEquals(referenceCtr(key, nextIv, 100, plain), sink.toByteArray());
        IllegalStateException again = assertThrows(IllegalStateException.class, () -> next.encrypt(new ByteArrayOutputStream()));
        assertTrue(again.getMessage().contains("withIv"), again.getMessage());
        try (CryptoInputStream in = next.decrypt(new MemoryChannel(sink.toByteArray()))) {
            assertArrayEquals(plain, in.readAllBytes());
        }

        IllegalArgumentException same = assertThrows(IllegalArgumentException.class, () -> ctr.withIv(iv.clone()));
        assertTrue(same.getMessage().contains("iv"), same.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ctr.withIv(new byte[12]));
        assertThrows(NullPointerException.class, () -> ctr.withIv(null));
        // The new instance keeps its own copies: destroying or changing the old one's inputs changes nothing.
        byte[] third = CtrFixtures.ivs().get("all-ff");
        CtrStreams last = next.withIv(third);
        Arrays.fill(third, (byte) 0);
        next.destroy();
        ByteArrayOutputStream out3 = new ByteArrayOutputStream();
        try (CryptoOutputStream out = last.encrypt(out3)) {
            out.write(plain);
        }
        assertArrayEquals(referenceCtr(key, CtrFixtures.ivs().get("all-ff"), 100, plain), out3.toByteArray());
        assertThrows(IllegalStateException.class, () -> next.withIv(new byte[16]), "a destroyed instance's key is gone");
    }

    @Test
    void destroyRefusesNewStreams() {
        CtrStreams ctr = CtrStreams.builder().engine(EngineKind.JCE).key(key(16)).iv(new byte[16]).build();
        ctr.destroy();
        assertTrue(ctr.isDestroyed());
        assertThrows(IllegalStateException.class, () -> ctr.encrypt(new ByteArrayOutputStream()));
    }

    /**
     * destroy() is documented as "streams already open keep working": writing, reading,
     * seeking and positioned reads on streams opened before it.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("io.sealpipe.engine.TestEngines#ctrKinds")
    void streamsOpenedBeforeDestroyKeepWorking(EngineKind kind) throws IOException {
        byte[] key = key(16);
        byte[] iv = CtrFixtures.ivs().get("all-ff");
        byte[] plain = bytes(2, 5000);
        byte[] cipher = referenceCtr(key, iv, 0, plain);
        CtrStreams ctr = CtrFixtures.builder(kind, key, iv).bufferSize(512).build();
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        CryptoOutputStream out = ctr.encrypt(sink);
        CryptoInputStream in = ctr.decrypt(new MemoryChannel(cipher));
        out.write(plain, 0, 100);
        ctr.destroy();

        out.write(plain, 100, plain.length - 100);
        out.close();
        assertArrayEquals(cipher, sink.toByteArray(), "encryption after destroy()");

        assertArrayEquals(Arrays.copyOf(plain, 10), in.readNBytes(10));
        in.seek(3000);
        assertArrayEquals(Arrays.copyOfRange(plain, 3000, 3010), in.readNBytes(10));
        byte[] b = new byte[20];
        in.readFully(4000, b); // the first positioned read needs a cipher of its own
        assertArrayEquals(Arrays.copyOfRange(plain, 4000, 4020), b, "positioned read after destroy()");
        in.close();
    }
}
