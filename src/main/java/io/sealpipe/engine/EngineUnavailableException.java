package io.sealpipe.engine;

/**
 * No engine can be used as configured: a forced engine that does not load,
 * {@code sealpipe.engine.require=openssl} with no OpenSSL engine, or a
 * {@code sealpipe.openssl.libcrypto} that does not load. The message says why and what to do;
 * the failures of the attempts are attached as suppressed exceptions.
 */
public class EngineUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public EngineUnavailableException(String message) {
        super(message);
    }
}
