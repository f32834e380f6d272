package io.sealpipe.engine;

import io.sealpipe.engine.accp.AccpEngine;
import io.sealpipe.engine.jce.JceEngine;
import io.sealpipe.engine.jna.OpenSslJnaEngine;
import io.sealpipe.engine.openssl.OpenSslJniEngine;
import io.sealpipe.internal.Log;
import io.sealpipe.internal.OptionalDependency;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where engines come from. {@link #auto()} applies the system properties of
 * {@link EngineSettings} and the rule of {@link EngineSelector}: an engine for each
 * {@link Operation}. The decision, with the reason for each operation and for each engine not
 * chosen, is logged once at INFO and available from {@link #report()}.
 *
 * <pre>{@code
 * CryptoEngine engine = Engines.auto();                    // the fastest engine here for each operation
 * CryptoEngine jce = Engines.get(EngineKind.JCE);         // this one or an exception
 * System.out.println(Engines.report().describe());
 * }</pre>
 */
public final class Engines {
    private static final Log LOG = Log.of(Engines.class);

    private Engines() {}

    private static EngineReport report;
    private static Inputs inputs;
    private static CryptoEngine auto;

    /** What the report was decided from, so that it can be decided again once accp has loaded. */
    private record Inputs(EngineSettings settings, CpuFeatures cpu, JavaRuntime jvm, List<EngineStatus> statuses,
            Optional<String> version, Optional<String> path) {
        EngineReport select() {
            return EngineSelector.select(settings, cpu, jvm, Platform.current(), statuses, version, path);
        }

        Inputs with(EngineStatus status) {
            List<EngineStatus> updated = statuses.stream().map(s -> s.kind() == status.kind() ? status : s).toList();
            return new Inputs(settings, cpu, jvm, updated, version, path);
        }
    }

    /**
     * The report for the system properties of this JVM, computed (and logged) once: later
     * changes to the properties are not seen. Thread-safe.
     *
     * @return what was found and decided, with the reason for each engine not chosen
     * @throws IllegalArgumentException if a {@code sealpipe.*} property has a value not understood
     */
    public static synchronized EngineReport report() {
        if (report == null) {
            inputs = probe(EngineSettings.fromSystemProperties());
            EngineReport r = inputs.select();
            if (r.chosen().isPresent()) {
                LOG.info("sealpipe engine {}: {}; {}; operations: {}{}", r.chosen().get().id(), r.decision(), notChosen(r),
                        operations(r), r.autoNote().map(note -> "; " + note).orElse(""));
            } else {
                LOG.warn("sealpipe has no usable engine: {}; {}", r.decision(), notChosen(r));
            }
            report = r;
        }
        return report;
    }

    /**
     * The engine chosen by the system properties (default {@code auto}).
     *
     * @return the chosen engine, shared and thread-safe
     * @throws EngineUnavailableException if the configuration allows no engine, saying why
     * @throws IllegalArgumentException if a {@code sealpipe.*} property has a value not understood
     */
    public static synchronized CryptoEngine auto() {
        EngineReport report = report();
        CryptoEngine base = get(report.chosen().orElseThrow(() -> failure(report)), report.settings());
        if (auto == null) {
            auto = autoEngine(report, base);
        }
        return auto;
    }

    /**
     * The chosen engine itself when it runs everything from the first call (as on a CPU without
     * AVX-512 and without accp), otherwise an {@link AutoEngine} over the engines of the report.
     */
    private static CryptoEngine autoEngine(EngineReport report, CryptoEngine base) {
        Map<Operation, AutoEngine.Route> routes = new EnumMap<>(Operation.class);
        Map<EngineKind, CryptoEngine> engines = new EnumMap<>(EngineKind.class);
        engines.put(base.kind(), base);
        Map<EngineKind, Map<Operation, Warmup>> warmups = new EnumMap<>(EngineKind.class);
        boolean single = true;
        for (OperationChoice c : report.operations().values()) {
            if (c.engine().isEmpty()) {
                throw new EngineUnavailableException(c.operation().id() + ": " + c.reason());
            }
            EngineKind kind = c.engine().get();
            CryptoEngine until = c.until().map(k -> engines.computeIfAbsent(k, x -> get(x, report.settings()))).orElse(null);
            boolean slowStart = kind == EngineKind.JCE || kind == EngineKind.ACCP;
            Warmup warmup = null;
            CryptoEngine engine;
            if (slowStart && report.settings().warmup()) {
                // accp is got at its first use (loading it is the slow start); jce at once. The map
                // may already hold the real engine (jce as the base engine, or forced).
                engine = engines.computeIfAbsent(kind, x -> x == EngineKind.ACCP
                        ? new LazyEngine(x, () -> get(x, report.settings())) : get(x, report.settings()));
                CryptoEngine known = engine;
                warmup = new Warmup(c.operation(), kind,
                        known instanceof LazyEngine lazy ? lazy::engine : () -> known, until);
            } else {
                engine = engines.computeIfAbsent(kind, x -> get(x, report.settings()));
            }
            single &= kind == base.kind() && until == null && warmup == null;
            routes.put(c.operation(), new AutoEngine.Route(engine, until, warmup));
        }
        return single ? base : new AutoEngine(routes);
    }

    /**
     * A specific engine, whatever {@code sealpipe.engine} says (the other settings, such as the
     * libcrypto path and the JCE provider, apply).
     *
     * @param kind the engine wanted
     * @return that engine, shared and thread-safe
     * @throws EngineUnavailableException if it cannot run here, saying why
     */
    public static CryptoEngine get(EngineKind kind) {
        return get(kind, report().settings());
    }

    /**
     * An engine by name, as in {@code --engine}.
     *
     * @param name {@code auto} (or blank or null) for {@link #auto()}, otherwise an engine id for
     *     {@link #get(EngineKind)}
     * @return that engine
     * @throws IllegalArgumentException if the name is not {@code auto} or an engine id
     * @throws EngineUnavailableException if the engine cannot run here
     */
    public static CryptoEngine forName(String name) {
        Optional<EngineKind> kind = EngineSettings.parseEngine(name);
        return kind.isPresent() ? get(kind.get()) : auto();
    }

    /** Probes every engine and applies the rule; used by {@link #report()}. */
    static EngineReport decide(EngineSettings settings) {
        return probe(settings).select();
    }

    /**
     * Probes every engine. accp is only looked for on the class path (loading it takes about
     * 0.3 s), unless it is forced or warm-up is off: it loads in the background at first use.
     */
    private static Inputs probe(EngineSettings settings) {
        EngineStatus jni = OpenSslJniEngine.status();
        // OpenSslJnaEngine links against JNA: without JNA, loading it fails (NoClassDefFoundError).
        EngineStatus jna = OptionalDependency.JNA.isPresent() ? OpenSslJnaEngine.status()
                : EngineStatus.unavailable(EngineKind.OPENSSL_JNA, OptionalDependency.JNA.absence(), null);
        EngineStatus jce = JceEngine.status(settings.jceProvider());
        Optional<String> version = Optional.ofNullable(OpenSslJniEngine.opensslVersion())
                .or(() -> Optional.ofNullable(jna.available() ? OpenSslJnaEngine.opensslVersion() : null));
        Optional<String> path = Optional.ofNullable(OpenSslJniEngine.opensslPath())
                .or(() -> Optional.ofNullable(jna.available() ? OpenSslJnaEngine.opensslPath() : null));
        boolean accpNeededNow = !settings.warmup() || settings.engine().orElse(null) == EngineKind.ACCP
                || settings.operations().containsValue(EngineKind.ACCP);
        EngineStatus accp = !OptionalDependency.ACCP.isPresent()
                ? EngineStatus.unavailable(EngineKind.ACCP, OptionalDependency.ACCP.absence(), null)
                : accpNeededNow ? AccpEngine.status()
                : EngineStatus.available(EngineKind.ACCP, "on the class path; loads in the background at first use");
        CpuFeatures cpu = CpuFeatures.detect(settings);
        JavaRuntime jvm = JavaRuntime.detect(cpu, OptionalDependency.ACCP.isPresent());
        return new Inputs(settings, cpu, jvm, List.of(jni, jna, jce, accp), version, path);
    }

    /** Loads accp (about 0.3 s) if it has not, and decides again with its real status. */
    private static void loadAccp() {
        EngineStatus status = AccpEngine.status();
        synchronized (Engines.class) {
            if (inputs != null && inputs.statuses().contains(status)) {
                return;
            }
            if (inputs != null) {
                inputs = inputs.with(status);
                report = inputs.select();
                if (status.available()) {
                    LOG.info("sealpipe: accp loaded ({}); operations: {}", status.reason(), operations(report));
                } else {
                    LOG.warn("sealpipe: accp did not load ({}); operations: {}", status.reason(), operations(report));
                }
            }
        }
    }

    private static CryptoEngine get(EngineKind kind, EngineSettings settings) {
        EngineStatus status = report().status(kind);
        if (!status.available()) {
            EngineUnavailableException e = new EngineUnavailableException(kind.id() + " is unavailable: " + status.reason());
            status.cause().ifPresent(e::initCause);
            throw e;
        }
        return switch (kind) {
            case OPENSSL_JNI -> OpenSslJniEngine.get();
            case OPENSSL_JNA -> OpenSslJnaEngine.get(); // available, so JNA is present
            case ACCP -> {
                loadAccp();
                EngineStatus loaded = report().status(EngineKind.ACCP);
                if (!loaded.available()) {
                    throw new EngineUnavailableException("accp is unavailable: " + loaded.reason());
                }
                yield AccpEngine.get();
            }
            case JCE -> {
                try {
                    yield JceEngine.withProvider(settings.jceProvider());
                } catch (NoSuchAlgorithmException e) {
                    throw new EngineUnavailableException("jce is unavailable: " + e.getMessage());
                }
            }
        };
    }

    private static EngineUnavailableException failure(EngineReport report) {
        EngineUnavailableException e = new EngineUnavailableException(report.decision());
        report.engines().stream().filter(s -> !s.available()).forEach(s -> e.addSuppressed(s.asException()));
        return e;
    }

    private static String operations(EngineReport report) {
        StringBuilder b = new StringBuilder();
        report.operations().values().forEach(c -> b.append(c.describe()).append("; "));
        return b.substring(0, Math.max(0, b.length() - 2));
    }

    private static String notChosen(EngineReport report) {
        StringBuilder b = new StringBuilder("not chosen: ");
        report.notChosen().forEach((k, why) -> b.append(k.id()).append(" (").append(why).append("); "));
        return b.substring(0, b.length() - 2);
    }
}
