package io.sealpipe.bench;

import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineReport;
import io.sealpipe.engine.Engines;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the engine choice costs at first use, in a fresh JVM (one fork per measurement, no
 * warm-up): {@code Engines.auto()} probes every engine (loading libsealpipe and libcrypto, JNA
 * and libcrypto again, SunJCE's ciphers; accp is only looked up on the class path), reads the CPU
 * and JVM flags, applies the rule and logs the result. The target of issue 13: at most 50 ms.
 * Background warm-ups start later, at an operation's first call, and are not part of this.
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

    /** The first call of a program that encrypts: probes, rule, log line. */
    @Benchmark
    public CryptoEngine autoAtFirstUse() {
        return Engines.auto();
    }

    /** The report alone (what {@code ./sealpipe info} needs), in a fresh JVM too. */
    @Benchmark
    public EngineReport reportAtFirstUse() {
        return Engines.report();
    }
}
