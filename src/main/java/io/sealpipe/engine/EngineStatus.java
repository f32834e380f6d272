package io.sealpipe.engine;

import java.util.Optional;

/**
 * Whether one engine can run here, and why or why not. Applications read these in
 * {@link EngineReport#engines()}; the factory methods are for the engines' probes.
 *
 * @param kind the engine
 * @param available whether it loaded and passed its self-check
 * @param reason what it runs on when available ("OpenSSL 3.0.19 via JNI"), otherwise why not
 * @param cause the failure behind an unavailable engine, if any
 */
public record EngineStatus(EngineKind kind, boolean available, String reason, Optional<Throwable> cause) {

    /**
     * An engine that can run here.
     *
     * @param kind the engine
     * @param detail what it runs on: OpenSSL's version and file, or the JCE provider
     * @return an available status with no cause
     */
    public static EngineStatus available(EngineKind kind, String detail) {
        return new EngineStatus(kind, true, detail, Optional.empty());
    }

    /**
     * An engine that cannot run here.
     *
     * @param kind the engine
     * @param reason why, and what to do about it, in one line
     * @param cause the failure behind it, or {@code null}
     * @return an unavailable status
     */
    public static EngineStatus unavailable(EngineKind kind, String reason, Throwable cause) {
        return new EngineStatus(kind, false, reason, Optional.ofNullable(cause));
    }

    /** The failure as an exception to attach, describing this engine. */
    Throwable asException() {
        Exception e = new Exception(kind.id() + ": " + reason);
        cause.ifPresent(e::initCause);
        return e;
    }
}
