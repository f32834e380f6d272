package io.sealpipe.engine;

import java.security.GeneralSecurityException;
import java.util.function.Supplier;

/**
 * An engine got at its first use rather than at decision time: accp, whose loading takes about
 * 0.3 s, in the routes of {@link AutoEngine} (its {@link Warmup} makes that first use, in the
 * background). Thread-safe.
 */
final class LazyEngine implements CryptoEngine {
    private final EngineKind kind;
    private final Supplier<CryptoEngine> load;
    private volatile CryptoEngine engine;

    LazyEngine(EngineKind kind, Supplier<CryptoEngine> load) {
        this.kind = kind;
        this.load = load;
    }

    /** The engine, loaded on the first call. */
    CryptoEngine engine() {
        CryptoEngine e = engine;
        if (e == null) {
            synchronized (this) {
                if (engine == null) {
                    engine = load.get();
                }
                e = engine;
            }
        }
        return e;
    }

    @Override
    public EngineKind kind() {
        return kind;
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        return engine().newAesCtr(key, iv);
    }

    @Override
    public StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException {
        return engine().newAesCfb(key, iv, encrypt);
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        return engine().newAesGcm(key);
    }

    @Override
    public Hmac newHmacSha256(byte[] key) throws GeneralSecurityException {
        return engine().newHmacSha256(key);
    }

    @Override
    public String toString() {
        return kind.id();
    }
}
