package io.sealpipe.bench;

import io.sealpipe.engine.EngineReport;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.jce.JceEngine;
import io.sealpipe.engine.jna.OpenSslJnaEngine;
import io.sealpipe.engine.openssl.OpenSslJniEngine;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What choosing the engines costs at first use, in a fresh JVM (one fork per measurement, no
 * warm-up): the first {@code Engines.report()}, which {@code Engines.auto()} and every stream
 * builder call.
 *
 * <p>{@code engines}:
 * <ul>
 *   <li>{@code probed}: the engines were loaded before (each engine's own {@code status()} in
 *       set-up: libsealpipe and libcrypto through JNI, JNA and libcrypto, SunJCE's ciphers), so
 *       what is timed is the decision: the settings, the CPU's features, HotSpot's flags, whether
 *       accp is on the class path, the rule for each operation and the log line. The target of
 *       issue 13: at most 50 ms.
 *   <li>{@code cold}: nothing loaded before: the decision plus loading the engines, which any
 *       program that encrypts pays once whatever the rule.
 * </ul>
 * Background warm-ups start later, at an operation's first call, and are not part of either.
 *
 * <pre>
 * mvn -Pjmh verify -Djmh.args="DecisionCostBenchmark -rf json -rff target/jmh-decision.json"
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 10)
public class DecisionCostBenchmark {

    @Param({"probed", "cold"})
    public String engines;

    @Setup(Level.Trial)
    public void setUp() {
        if (engines.equals("probed")) {
            OpenSslJniEngine.status();
            OpenSslJnaEngine.status();
            JceEngine.status(null);
        }
    }

    /** The first report of this JVM: what {@code Engines.auto()} decides from. */
    @Benchmark
    public EngineReport firstReport() {
        return Engines.report();
    }
}
