package io.sealpipe.engine;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What engine selection found and decided: the CPU, OpenSSL, each engine's availability, the
 * chosen engine and why every other one was not chosen. {@code ./sealpipe info} prints it.
 *
 * @param cpu CPU features (with any simulation applied)
 * @param jvm the JVM's AES intrinsics
 * @param opensslVersion OpenSSL's version string, or empty if libcrypto did not load
 * @param opensslPath the libcrypto file, or empty
 * @param engines every engine's status, in preference order
 * @param chosen the engine of every operation that no rule moves elsewhere (or the forced
 *     one), or empty if selection failed
 * @param decision one sentence on that choice (or on the failure)
 * @param notChosen for each other engine, why it was not chosen
 * @param operations the engine of each operation, and why
 * @param settings the settings the decision was made with
 * @param platform where the JVM runs ({@link Platform#current()} for {@link Engines#report()})
 */
public record EngineReport(CpuFeatures cpu, JavaRuntime jvm, Optional<String> opensslVersion,
        Optional<String> opensslPath, List<EngineStatus> engines, Optional<EngineKind> chosen, String decision,
        Map<EngineKind, String> notChosen, Map<Operation, OperationChoice> operations, EngineSettings settings, Platform platform) {

    /**
     * Whether auto's rule was measured on this platform ({@link EngineSelector#MEASURED_ON}:
     * {@code linux-x86_64} only). Elsewhere the rule is applied as stated, without a measurement
     * behind its speed.
     *
     * @return true on a platform the rule was measured on
     */
    public boolean autoMeasured() {
        return EngineSelector.measuredOn(platform);
    }

    /**
     * What to do where auto's rule was not measured.
     *
     * @return e.g. {@code auto's rule is not measured on linux-aarch64: run `sealpipe speed` here
     *     to compare the engines, and force one with sealpipe.engine / sealpipe.engine.OP}; empty
     *     where it was measured
     */
    public Optional<String> autoNote() {
        return autoMeasured() ? Optional.empty() : Optional.of(EngineSelector.notMeasuredNote(platform));
    }

    /**
     * The choice for one operation.
     *
     * @param op an operation
     * @return its entry in {@link #operations()}
     */
    public OperationChoice operation(Operation op) {
        return operations.get(op);
    }

    /**
     * One engine's status.
     *
     * @param kind the engine
     * @return its entry in {@link #engines()}
     * @throws java.util.NoSuchElementException if the report has no entry for it (a report from
     *     {@link Engines#report()} has one for every kind)
     */
    public EngineStatus status(EngineKind kind) {
        return engines.stream().filter(s -> s.kind() == kind).findFirst().orElseThrow();
    }

    /**
     * A few lines for people, as {@code ./sealpipe info} prints them.
     *
     * @return the CPU, the platform, OpenSSL, each engine's status, the choice and the reasons (and,
     *     where auto's rule was not measured, a note saying so), one per line
     */
    public String describe() {
        StringBuilder b = new StringBuilder();
        b.append("CPU:     ").append(cpu).append('\n');
        b.append("Java:    ").append(jvm).append('\n');
        b.append("Platform: ").append(platform.id()).append('\n');
        b.append("OpenSSL: ").append(opensslVersion.orElse("not loaded"))
                .append(opensslPath.map(p -> " (" + p + ")").orElse("")).append('\n');
        b.append("Engines:\n");
        for (EngineStatus s : engines) {
            b.append(String.format("  %-12s %-11s %s%n", s.kind().id(), s.available() ? "available" : "unavailable",
                    s.reason()));
        }
        b.append("Chosen:  ").append(chosen.map(EngineKind::id).orElse("none")).append(": ").append(decision)
                .append('\n');
        notChosen.forEach((kind, why) -> b.append("  not ").append(kind.id()).append(": ").append(why).append('\n'));
        autoNote().ifPresent(note -> b.append("Note:    ").append(note).append('\n'));
        b.append("Operations:\n");
        operations.values().forEach(c -> b.append("  ").append(c.describe()).append('\n'));
        return b.toString();
    }
}
