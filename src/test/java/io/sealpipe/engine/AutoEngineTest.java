package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The engine of {@code auto} that runs an operation on a bridge engine until the chosen one is
 * ready, then moves over mid-stream. The switch is made at chosen points (the warm-up runs on
 * the test's thread), and the output must equal one engine's alone, byte for byte.
 */
class AutoEngineTest {
    private static final byte[] KEY = bytes(32, 1);
    private static final byte[] IV = bytes(16, 2);

    /** Pairs of (bridge, chosen) among the engines available here. */
    static Stream<Arguments> pairs() {
        return TestEngines.kinds(Operation.CTR).flatMap(a -> TestEngines.kinds(Operation.CTR).filter(b -> b != a)
                .map(b -> Arguments.of(a, b)));
    }

    static Stream<Arguments> gcmPairs() {
        return TestEngines.kinds(Operation.GCM_SEAL).flatMap(a -> TestEngines.kinds(Operation.GCM_SEAL)
                .filter(b -> b != a).map(b -> Arguments.of(a, b)));
    }

    private static Warmup pending(Operation op, EngineKind chosen, CryptoEngine bridge) {
        // A kind other than jce is ready as soon as run() has got the engine: the test decides when.
        CryptoEngine engine = Engines.get(chosen);
        return new Warmup(op, EngineKind.ACCP, () -> engine, bridge).withoutThread();
    }

    private static AutoEngine auto(Operation op, EngineKind bridge, EngineKind chosen, Warmup warmup) {
        Map<Operation, AutoEngine.Route> routes = new EnumMap<>(Operation.class);
        for (Operation o : Operation.values()) {
            routes.put(o, new AutoEngine.Route(Engines.get(bridge), null, null));
        }
        routes.put(op, new AutoEngine.Route(Engines.get(chosen), Engines.get(bridge), warmup));
        return new AutoEngine(routes);
    }

    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("pairs")
    void ctrMovesToTheChosenEngineAtTheSamePointOfTheKeystream(EngineKind bridge, EngineKind chosen) throws Exception {
        byte[] plain = bytes(5000, 3);
        byte[] expected = new byte[plain.length];
        try (StreamCipher one = Engines.get(chosen).newAesCtr(KEY, IV)) {
            one.update(plain, 0, plain.length, expected, 0);
        }
        // Switch after every offset in the first blocks, and at a few later ones.
        for (int switchAt : new int[] {0, 1, 15, 16, 17, 31, 33, 1000, 4097}) {
            Warmup warmup = pending(Operation.CTR, chosen, Engines.get(bridge));
            AutoEngine auto = auto(Operation.CTR, bridge, chosen, warmup);
            byte[] out = new byte[plain.length];
            try (StreamCipher c = auto.newAesCtr(KEY, IV)) {
                assertTrue(c instanceof AutoEngine.SwitchingCtr, c.getClass().getName());
                c.update(plain, 0, switchAt, out, 0);
                warmup.run();
                assertTrue(warmup.ready());
                // the rest through direct buffers, in uneven pieces
                ByteBuffer in = ByteBuffer.allocateDirect(plain.length - switchAt).put(plain, switchAt, plain.length - switchAt).flip();
                ByteBuffer o = ByteBuffer.allocateDirect(in.remaining());
                while (in.hasRemaining()) {
                    int n = Math.min(in.remaining(), 7 + in.position() % 100);
                    ByteBuffer slice = in.slice().limit(n);
                    c.update(slice, o);
                    in.position(in.position() + n);
                }
                o.flip().get(out, switchAt, o.remaining());
            }
            assertArrayEquals(expected, out, "switched after " + switchAt + " bytes");
        }
    }

    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("pairs")
    void ctrResetAfterTheSwitchStartsOverOnTheChosenEngine(EngineKind bridge, EngineKind chosen) throws Exception {
        byte[] plain = bytes(100, 4);
        byte[] expected = new byte[100];
        byte[] iv2 = bytes(16, 5);
        try (StreamCipher one = Engines.get(chosen).newAesCtr(KEY, iv2)) {
            one.update(plain, 0, 100, expected, 0);
        }
        Warmup warmup = pending(Operation.CTR, chosen, Engines.get(bridge));
        try (StreamCipher c = auto(Operation.CTR, bridge, chosen, warmup).newAesCtr(KEY, IV)) {
            c.update(plain, 0, 40, new byte[40], 0);
            c.reset(iv2);
            byte[] out = new byte[100];
            c.update(plain, 0, 10, out, 0);
            warmup.run();
            c.update(plain, 10, 90, out, 10);
            assertArrayEquals(expected, out);
        }
    }

    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("gcmPairs")
    void gcmSealsOnTheBridgeThenOnTheChosenEngineAndEveryMessageOpensAnywhere(EngineKind bridge, EngineKind chosen)
            throws Exception {
        Warmup warmup = pending(Operation.GCM_SEAL, chosen, Engines.get(bridge));
        AutoEngine auto = auto(Operation.GCM_SEAL, bridge, chosen, warmup);
        byte[] plain = bytes(3 * AeadCipher.CHUNK_SIZE, 6);
        byte[] nonce1 = bytes(12, 7);
        byte[] nonce2 = bytes(12, 8);
        byte[] sealed1 = new byte[300 + 16];
        byte[] sealed2 = new byte[300 + 16];
        byte[] chunks = new byte[3 * AeadCipher.SEALED_CHUNK_SIZE];
        try (AeadCipher c = auto.newAesGcm(KEY)) {
            c.seal(nonce1, null, plain, 0, 300, sealed1, 0);
            warmup.run();
            c.seal(nonce2, null, plain, 0, 300, sealed2, 0);
            c.sealChunks(nonce1, 0, plain, 0, 3, chunks, 0);
        }
        try (AeadCipher check = Engines.get(bridge).newAesGcm(KEY);
                AeadCipher reference = Engines.get(chosen).newAesGcm(KEY)) {
            byte[] expected = new byte[316];
            reference.seal(nonce2, null, plain, 0, 300, expected, 0);
            assertArrayEquals(expected, sealed2, "sealed on the chosen engine");
            byte[] out = new byte[3 * AeadCipher.CHUNK_SIZE];
            assertEquals(300, check.open(nonce1, null, sealed1, 0, sealed1.length, out, 0));
            assertEquals(3, check.openChunks(nonce1, 0, chunks, 0, 3, out, 0));
            assertArrayEquals(plain, out);
        }
    }

    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("gcmPairs")
    void gcmOpensOnTheBridgeUntilReadyAndStillRefusesForgeries(EngineKind bridge, EngineKind chosen) throws Exception {
        Warmup warmup = pending(Operation.GCM_OPEN, chosen, Engines.get(bridge));
        AutoEngine auto = auto(Operation.GCM_OPEN, bridge, chosen, warmup);
        byte[] plain = bytes(1000, 9);
        byte[] nonce = bytes(12, 10);
        byte[] sealed = new byte[1016];
        try (AeadCipher s = Engines.get(bridge).newAesGcm(KEY)) {
            s.seal(nonce, null, plain, 0, 1000, sealed, 0);
        }
        try (AeadCipher c = auto.newAesGcm(KEY)) {
            byte[] out = new byte[1000];
            assertEquals(1000, c.open(nonce, null, sealed, 0, sealed.length, out, 0));
            warmup.run();
            assertEquals(1000, c.open(nonce, null, sealed, 0, sealed.length, out, 0));
            assertArrayEquals(plain, out);
            sealed[5] ^= 1;
            assertThrows(AEADBadTagException.class, () -> c.open(nonce, null, sealed, 0, sealed.length, out, 0));
        }
    }

    /**
     * Sealing and opening warm up separately on one chosen engine: with sealing ready first, a
     * cipher made then must still be able to open on the bridge, and later on the chosen engine
     * (the key it keeps for that must not go when the chosen engine's cipher is made).
     */
    @ParameterizedTest(name = "{0} then {1}")
    @MethodSource("gcmPairs")
    void sealReadyBeforeOpenStillOpensOnTheBridgeThenOnTheChosenEngine(EngineKind bridge, EngineKind chosen)
            throws Exception {
        Warmup sealWarmup = pending(Operation.GCM_SEAL, chosen, Engines.get(bridge));
        Warmup openWarmup = pending(Operation.GCM_OPEN, chosen, Engines.get(bridge));
        Map<Operation, AutoEngine.Route> routes = new EnumMap<>(Operation.class);
        for (Operation o : Operation.values()) {
            routes.put(o, new AutoEngine.Route(Engines.get(bridge), null, null));
        }
        routes.put(Operation.GCM_SEAL, new AutoEngine.Route(Engines.get(chosen), Engines.get(bridge), sealWarmup));
        routes.put(Operation.GCM_OPEN, new AutoEngine.Route(Engines.get(chosen), Engines.get(bridge), openWarmup));
        sealWarmup.run();
        byte[] plain = bytes(500, 12);
        byte[] sealed = new byte[516];
        byte[] out = new byte[500];
        try (AeadCipher c = new AutoEngine(routes).newAesGcm(KEY)) {
            c.seal(bytes(12, 13), null, plain, 0, 500, sealed, 0); // on the chosen engine
            assertEquals(500, c.open(bytes(12, 13), null, sealed, 0, sealed.length, out, 0)); // on the bridge
            assertArrayEquals(plain, out);
            openWarmup.run();
            java.util.Arrays.fill(out, (byte) 0);
            assertEquals(500, c.open(bytes(12, 13), null, sealed, 0, sealed.length, out, 0)); // on the chosen engine
            assertArrayEquals(plain, out);
        }
    }

    @Test
    void aFailedWarmUpLeavesTheOperationOnTheBridge() throws Exception {
        EngineKind bridge = TestEngines.kinds(Operation.CTR).findFirst().orElseThrow();
        Warmup failing = new Warmup(Operation.CTR, EngineKind.ACCP, () -> {
            throw new EngineUnavailableException("accp did not load: test");
        }, Engines.get(bridge)).withoutThread();
        failing.run();
        assertTrue(failing.done());
        assertFalse(failing.ready());
        Map<Operation, AutoEngine.Route> routes = new EnumMap<>(Operation.class);
        for (Operation o : Operation.values()) {
            routes.put(o, new AutoEngine.Route(Engines.get(bridge), Engines.get(bridge), failing));
        }
        byte[] plain = bytes(64, 11);
        byte[] expected = new byte[64];
        try (StreamCipher one = Engines.get(bridge).newAesCtr(KEY, IV)) {
            one.update(plain, 0, 64, expected, 0);
        }
        byte[] out = new byte[64];
        try (StreamCipher c = new AutoEngine(routes).newAesCtr(KEY, IV)) {
            c.update(plain, 0, 64, out, 0);
        }
        assertArrayEquals(expected, out);
    }

    @Test
    void aJceWarmUpWithoutABridgeCompilesAndEnds() {
        Warmup w = new Warmup(Operation.CTR, EngineKind.JCE, () -> Engines.get(EngineKind.JCE), null).withoutThread();
        w.run();
        assertTrue(w.ready(), "20,000 small calls end the warm-up well within its limit");
    }

    @Test
    void aJceWarmUpWithABridgeEndsEitherWay() {
        // Whether jce gets as fast as the bridge depends on the CPU: the test asserts only that the
        // warm-up ends and decides, and that a decision is final.
        EngineKind bridge = TestEngines.kinds(Operation.GCM_SEAL).filter(k -> k != EngineKind.JCE).findFirst()
                .orElse(EngineKind.JCE);
        Warmup w = new Warmup(Operation.GCM_SEAL, EngineKind.JCE, () -> Engines.get(EngineKind.JCE),
                Engines.get(bridge)).withoutThread();
        w.run();
        assertTrue(w.done());
        boolean ready = w.ready();
        assertEquals(ready, w.readyOrStart());
    }

    @Test
    void theNameSaysAutoOnlyWhenOperationsRunOnSeveralEngines() {
        EngineKind a = TestEngines.kinds(Operation.CTR).findFirst().orElseThrow();
        Map<Operation, AutoEngine.Route> routes = new EnumMap<>(Operation.class);
        for (Operation o : Operation.values()) {
            routes.put(o, new AutoEngine.Route(Engines.get(a), null, null));
        }
        assertEquals(a.id(), new AutoEngine(routes).name());
        EngineKind b = TestEngines.kinds(Operation.CTR).filter(k -> k != a).findFirst().orElseThrow();
        routes.put(Operation.CTR, new AutoEngine.Route(Engines.get(b), null, null));
        AutoEngine mixed = new AutoEngine(routes);
        assertEquals("auto", mixed.name());
        assertEquals(b, mixed.kindFor(Operation.CTR));
        assertEquals(a, mixed.kindFor(Operation.GCM_OPEN));
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }
}
