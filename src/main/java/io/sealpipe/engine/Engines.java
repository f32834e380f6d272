package io.sealpipe.engine;

import io.sealpipe.engine.jce.JceEngine;
import io.sealpipe.engine.jna.OpenSslJnaEngine;
import io.sealpipe.engine.openssl.OpenSslJniEngine;
import io.sealpipe.internal.OptionalDependency;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where engines come from. {@link #auto()} applies the system properties of
 * {@link EngineSettings} and the rule of {@link EngineSelector}; the decision, with the reason
 * each other engine was not chosen, is logged once at INFO and available from {@link #report()}.
 *
 * <pre>{@code
 * CryptoEngine engine = Engines.auto();                    // what sealpipe.engine says, default auto
 * CryptoEngine jce = Engines.get(EngineKind.JCE);         // this one or an exception
 * System.out.println(Engines.report().describe());
 * }</pre>
 */
public final class Engines {
    private static final Logger LOG = LoggerFactory.getLogger(Engines.class);

    private Engines() {}

    private static EngineReport report;

    /**
     * The report for the system properties of this JVM, computed (and logged) once: later
     * changes to the properties are not seen. Thread-safe.
     *
     * @return what was found and decided, with the reason for each engine not chosen
     * @throws IllegalArgumentException if a {@code sealpipe.*} property has a value not understood
     */
    public static synchronized EngineReport report() {
        if (report == null) {
            EngineReport r = decide(EngineSettings.fromSystemProperties());
            if (r.chosen().isPresent()) {
                LOG.info("sealpipe engine {}: {}; {}", r.chosen().get().id(), r.decision(), notChosen(r));
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
    public static CryptoEngine auto() {
        EngineReport report = report();
        return get(report.chosen().orElseThrow(() -> failure(report)), report.settings());
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
        EngineStatus jni = OpenSslJniEngine.status();
        // OpenSslJnaEngine links against JNA: without JNA, loading it fails (NoClassDefFoundError).
        EngineStatus jna = OptionalDependency.JNA.isPresent() ? OpenSslJnaEngine.status()
                : EngineStatus.unavailable(EngineKind.OPENSSL_JNA, OptionalDependency.JNA.absence(), null);
        EngineStatus jce = JceEngine.status(settings.jceProvider());
        Optional<String> version = Optional.ofNullable(OpenSslJniEngine.opensslVersion())
                .or(() -> Optional.ofNullable(jna.available() ? OpenSslJnaEngine.opensslVersion() : null));
        Optional<String> path = Optional.ofNullable(OpenSslJniEngine.opensslPath())
                .or(() -> Optional.ofNullable(jna.available() ? OpenSslJnaEngine.opensslPath() : null));
        return EngineSelector.select(settings, CpuFeatures.detect(settings), List.of(jni, jna, jce), version, path);
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
            case ACCP -> throw new EngineUnavailableException("accp: not wired in yet"); // replaced by the accp engine
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

    private static String notChosen(EngineReport report) {
        StringBuilder b = new StringBuilder("not chosen: ");
        report.notChosen().forEach((k, why) -> b.append(k.id()).append(" (").append(why).append("); "));
        return b.substring(0, b.length() - 2);
    }
}
