package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Engines asked for by kind or name are the ones returned; CI must have the native engine. */
class ForcedEngineTest {

    static java.util.stream.Stream<EngineKind> kinds() {
        return TestEngines.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void getAndForNameReturnTheKindAskedFor(EngineKind kind) {
        CryptoEngine engine = TestEngines.engine(kind);
        assertEquals(kind, engine.kind());
        assertEquals(kind, Engines.forName(kind.id()).kind());
    }

    @Test
    void jniEngineLoadsInCi() {
        if (TestEngines.inCi()) {
            EngineStatus jni = Engines.report().status(EngineKind.OPENSSL_JNI);
            assertTrue(jni.available(), "CI=true but the JNI engine did not load: " + jni.reason());
            assertEquals(EngineKind.OPENSSL_JNI, Engines.report().chosen().orElseThrow(),
                    "the base engine: " + Engines.report().decision());
        }
    }
}
