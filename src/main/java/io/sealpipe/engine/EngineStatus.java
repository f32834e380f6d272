package io.sealpipe.engine;

import java.util.Optional;

/**
 * Whether one engine can run here, and why or why not.
 *
 * @param kind the engine
 * @param available whether it loaded and passed its self-check
 * @param reason what it runs on when available ("OpenSSL 3.0.19 via JNI"), otherwise why not
 * @param cause the failure behind an unavailable engine, if any
 */
public record EngineStatus(EngineKind kind, boolean available, String reason, Optional<Throwable> cause) {

    public static EngineStatus available(EngineKind kind, String detail) {
        return new EngineStatus(kind, true, detail, Optional.empty());
    }

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
