package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.stream.Stream;

/**
 * Every engine through the same tests. An engine that does not load here is skipped locally,
 * but in CI ({@code CI=true}) every engine must load, so CI never passes by testing JCE alone.
 */
public final class TestEngines {
    private TestEngines() {}

    static final HexFormat HEX = HexFormat.of();

    public static boolean inCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** The engines, for {@code @MethodSource}. */
    public static Stream<EngineKind> kinds() {
        return Arrays.stream(EngineKind.values());
    }

    /** The engines that have AES-CTR (all but accp), for {@code @MethodSource} of CTR tests. */
    public static Stream<EngineKind> ctrKinds() {
        return kinds().filter(k -> k.supports(Operation.CTR));
    }

    /** The engines that offer an operation and are available here, for pairing engines up. */
    public static Stream<EngineKind> kinds(Operation op) {
        return kinds().filter(k -> k.supports(op) && Engines.report().status(k).available());
    }

    /**
     * The engine, or a skipped test (outside CI) if it cannot run here. In CI, an engine that
     * does not load fails the test, except the engines a run leaves out on purpose:
     * {@code -Dsealpipe.test.absentEngines=accp} (the aarch64 run, which has no accp jar).
     */
    public static CryptoEngine engine(EngineKind kind) {
        EngineStatus status = Engines.report().status(kind);
        if (required(kind)) {
            assertTrue(status.available(), kind.id() + " must load in CI: " + status.reason());
        }
        assumeTrue(status.available(), kind.id() + " unavailable here: " + status.reason());
        return Engines.get(kind);
    }

    /**
     * Whether this run must have the engine: in CI, every engine but those the run leaves out
     * on purpose ({@code sealpipe.test.absentEngines}).
     */
    public static boolean required(EngineKind kind) {
        return inCi() && !Arrays.asList(System.getProperty("sealpipe.test.absentEngines", "").split(","))
                .contains(kind.id());
    }

    /**
     * The engine for a test that also needs operations it may lack (accp has no CTR and no CFB):
     * the test is skipped for an engine without them, in CI too, since no setting gives them.
     */
    public static CryptoEngine engine(EngineKind kind, Operation... needed) {
        for (Operation op : needed) {
            assumeTrue(kind.supports(op), kind.id() + " has no " + op.id() + " (auto runs it on another engine)");
        }
        return engine(kind);
    }

    static byte[] hex(String s) {
        return HEX.parseHex(s);
    }
}
