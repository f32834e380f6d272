package io.sealpipe.engine;

/**
 * No engine can be used as configured: a forced engine that does not load,
 * {@code sealpipe.engine.require=openssl} with no OpenSSL engine, or a
 * {@code sealpipe.openssl.libcrypto} that does not load. The message says why and what to do.
 * From {@link Engines#auto()}, the failure of every unavailable engine is attached as a
 * suppressed exception; from {@link Engines#get(EngineKind)}, the engine's failure is the cause.
 */
public class EngineUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is unavailable, why, and what to do
     */
    public EngineUnavailableException(String message) {
        super(message);
    }
}
