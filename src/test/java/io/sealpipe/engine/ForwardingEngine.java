package io.sealpipe.engine;

import java.security.GeneralSecurityException;

/**
 * An engine that passes every call to a real one: the base of the test engines that count the
 * ciphers they make, hook their calls or make them fail ({@code HookedEngine}, the soak's
 * {@code CountingEngine}, {@code FailedCipherSetupTest}'s), which override only what they add.
 */
public class ForwardingEngine implements CryptoEngine {
    protected final CryptoEngine real;

    public ForwardingEngine(CryptoEngine real) {
        this.real = real;
    }

    @Override
    public EngineKind kind() {
        return real.kind();
    }

    @Override
    public EngineKind kindFor(Operation op) {
        return real.kindFor(op);
    }

    @Override
    public String name() {
        return real.name();
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        return real.newAesCtr(key, iv);
    }

    @Override
    public StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException {
        return real.newAesCfb(key, iv, encrypt);
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        return real.newAesGcm(key);
    }

    @Override
    public Hmac newHmacSha256(byte[] key) throws GeneralSecurityException {
        return real.newHmacSha256(key);
    }
}
