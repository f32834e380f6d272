package io.sealpipe.engine.accp;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import com.amazon.corretto.crypto.provider.SelfTestStatus;
import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.EngineUnavailableException;
import io.sealpipe.engine.Hmac;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.engine.jce.JceEngine;
import java.security.GeneralSecurityException;
import java.util.HexFormat;

/**
 * The accp engine: AES-GCM and HMAC-SHA256 on the Amazon Corretto Crypto Provider (AWS-LC
 * through its own JNI library), used as a provider object, not installed in
 * {@link java.security.Security}. It has no AES-CTR and no AES-CFB: those calls throw
 * {@link java.security.NoSuchAlgorithmException}, and {@code auto} takes them from another
 * engine.
 *
 * <p>ACCP is an optional dependency ({@code software.amazon.cryptools:AmazonCorrettoCryptoProvider}
 * with the classifier of the platform): do not load this class unless
 * {@link io.sealpipe.internal.OptionalDependency#ACCP} is present. Its first use extracts and
 * loads a native library of about 10 MB (about 0.3 s), so {@link #status()} does that once and
 * remembers the outcome.
 */
public final class AccpEngine implements CryptoEngine {
    private static final AccpEngine INSTANCE = new AccpEngine();

    private final JceEngine jce;

    private AccpEngine() {
        jce = JceEngine.onNativeProvider(AmazonCorrettoCryptoProvider.INSTANCE, EngineKind.ACCP);
    }

    /**
     * Loads ACCP (once) and checks it: its native library loaded, its own self tests passed, and
     * an AES-GCM and an HMAC-SHA256 known answer through this engine. Never throws.
     *
     * @return available with ACCP's and AWS-LC's versions, or unavailable with what failed
     */
    public static EngineStatus status() {
        return Probe.STATUS;
    }

    /**
     * The engine.
     *
     * @return the engine, once {@link #status()} says it is available
     * @throws EngineUnavailableException with the reason if ACCP did not load or failed its checks
     */
    public static CryptoEngine get() {
        EngineStatus status = status();
        if (!status.available()) {
            EngineUnavailableException e = new EngineUnavailableException("accp is unavailable: " + status.reason());
            status.cause().ifPresent(e::initCause);
            throw e;
        }
        return INSTANCE;
    }

    @Override
    public EngineKind kind() {
        return EngineKind.ACCP;
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        return jce.newAesCtr(key, iv); // throws: accp has no ctr
    }

    @Override
    public StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException {
        return jce.newAesCfb(key, iv, encrypt); // throws: accp has no cfb
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        return jce.newAesGcm(key);
    }

    @Override
    public Hmac newHmacSha256(byte[] key) throws GeneralSecurityException {
        return jce.newHmacSha256(key);
    }

    @Override
    public String toString() {
        return kind().id();
    }

    /** The probe, run when this class is first used. */
    private static final class Probe {
        static final EngineStatus STATUS = probe();

        private static EngineStatus probe() {
            try {
                AmazonCorrettoCryptoProvider accp = AmazonCorrettoCryptoProvider.INSTANCE;
                Throwable loading = accp.getLoadingError();
                if (loading != null) {
                    return unavailable("its native library did not load (" + loading + ")", loading);
                }
                SelfTestStatus selfTests = accp.runSelfTests();
                if (selfTests != SelfTestStatus.PASSED) {
                    return unavailable("its self tests did not pass (" + selfTests + ")", null);
                }
                knownAnswers(INSTANCE);
                return EngineStatus.available(EngineKind.ACCP, "Amazon Corretto Crypto Provider " + accp.getVersionStr()
                        + " (" + accp.getAwsLcVersionStr() + "): AES-GCM and HMAC-SHA256; no AES-CTR or AES-CFB");
            } catch (GeneralSecurityException | RuntimeException | LinkageError e) {
                return unavailable(e.toString(), e);
            }
        }

        private static EngineStatus unavailable(String what, Throwable cause) {
            return EngineStatus.unavailable(EngineKind.ACCP, "the Amazon Corretto Crypto Provider is on the class path"
                    + " but " + what + "; remove it, or use another engine (sealpipe.engine)", cause);
        }

        /** NIST's GCM test case 3 (AES-128) and RFC 4231 test case 2, through this engine. */
        private static void knownAnswers(CryptoEngine engine) throws GeneralSecurityException {
            HexFormat hex = HexFormat.of();
            byte[] key = hex.parseHex("feffe9928665731c6d6a8f9467308308");
            byte[] nonce = hex.parseHex("cafebabefacedbaddecaf888");
            byte[] plain = hex.parseHex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                    + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255");
            String expected = "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
                    + "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
                    + "4d5c2af327cd64a62cf35abd2ba6fab4";
            byte[] sealed = new byte[plain.length + AeadCipher.TAG_LENGTH];
            byte[] opened = new byte[plain.length];
            try (AeadCipher gcm = engine.newAesGcm(key)) {
                gcm.seal(nonce, null, plain, 0, plain.length, sealed, 0);
                if (!hex.formatHex(sealed).equals(expected)) {
                    throw new GeneralSecurityException("AES-GCM gave the wrong ciphertext for NIST's test case 3");
                }
                gcm.open(nonce, null, sealed, 0, sealed.length, opened, 0);
                if (!java.util.Arrays.equals(opened, plain)) {
                    throw new GeneralSecurityException("AES-GCM did not open NIST's test case 3");
                }
            }
            byte[] mac = new byte[32];
            try (Hmac hmac = engine.newHmacSha256("Jefe".getBytes(java.nio.charset.StandardCharsets.US_ASCII))) {
                byte[] data = "what do ya want for nothing?".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                hmac.update(data, 0, data.length);
                hmac.doFinal(mac, 0);
            }
            if (!hex.formatHex(mac).equals("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")) {
                throw new GeneralSecurityException("HMAC-SHA256 gave the wrong tag for RFC 4231 test case 2");
            }
        }
    }
}
