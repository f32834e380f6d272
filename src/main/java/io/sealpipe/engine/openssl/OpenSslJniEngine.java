package io.sealpipe.engine.openssl;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineSettings;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.Hmac;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.internal.BaseAeadCipher;
import io.sealpipe.internal.BaseHmac;
import io.sealpipe.internal.BaseStreamCipher;
import io.sealpipe.internal.Buffers;
import io.sealpipe.internal.Checks;
import io.sealpipe.internal.Cleaners;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.InvalidAlgorithmParameterException;
import java.util.OptionalInt;
import java.util.function.LongConsumer;
import javax.crypto.AEADBadTagException;

/**
 * The OpenSSL engine through sealpipe's own JNI library: libsealpipe.so opens libcrypto
 * (OpenSSL 3.x or 1.1) at run time. Each cipher object owns one EVP_CIPHER_CTX, keyed once;
 * the key copies made in native code are cleansed once the context is keyed, and the context
 * is freed by {@code close()} or, if forgotten, through a Cleaner.
 *
 * <p>Applications get the engine from {@link io.sealpipe.engine.Engines}, which reports why it
 * is unavailable where it is; the static methods here are the probe and accessors
 * {@code Engines} and {@link io.sealpipe.engine.CpuFeatures} use. The engine is stateless and
 * thread-safe; the ciphers it makes are not.
 */
public final class OpenSslJniEngine implements CryptoEngine {
    private static final OpenSslJniEngine INSTANCE = new OpenSslJniEngine();

    private OpenSslJniEngine() {}

    /** Loading happens once per JVM, on first use of this class. */
    private static final class Loaded {
        static final Throwable LIBRARY_FAILURE;
        static final Throwable LIBCRYPTO_FAILURE;
        static final String VERSION;
        static final String PATH;

        static {
            Throwable libraryFailure = null;
            Throwable libcryptoFailure = null;
            String version = null;
            String path = null;
            try {
                NativeLibrary.load();
                NativeCrypto.checkConstants(NativeCrypto.constants());
                // Addresses need libsealpipe only, not libcrypto: for every engine's overlap check.
                Buffers.readAddressesWith(NativeCrypto::directBufferAddress);
            } catch (Throwable t) { // UnsatisfiedLinkError, LinkageError, SecurityException
                libraryFailure = t;
            }
            if (libraryFailure == null) {
                try {
                    NativeCrypto.loadLibcrypto(EngineSettings.fromSystemProperties().libcrypto());
                    version = NativeCrypto.opensslVersion();
                    path = NativeCrypto.opensslPath();
                } catch (Throwable t) {
                    libcryptoFailure = t;
                }
            }
            LIBRARY_FAILURE = libraryFailure;
            LIBCRYPTO_FAILURE = libcryptoFailure;
            VERSION = version;
            PATH = path;
        }
    }

    /**
     * Whether libsealpipe.so and libcrypto both loaded. They are loaded once per JVM, on first
     * use: libsealpipe.so from {@code sealpipe.native.library} or the jar, libcrypto
     * from {@code sealpipe.openssl.libcrypto} or the default names. Never throws.
     *
     * @return available with OpenSSL's version and file, or unavailable with the reason
     */
    public static EngineStatus status() {
        return status(Loaded.LIBRARY_FAILURE, Loaded.LIBCRYPTO_FAILURE, Loaded.VERSION, Loaded.PATH);
    }

    /** The status for the outcome of loading (a failure, or else OpenSSL's version and file); pure. */
    static EngineStatus status(Throwable libraryFailure, Throwable libcryptoFailure, String version, String path) {
        if (libraryFailure != null) {
            return EngineStatus.unavailable(EngineKind.OPENSSL_JNI,
                    "libsealpipe native library did not load: " + libraryFailure.getMessage(), libraryFailure);
        }
        if (libcryptoFailure != null) {
            return EngineStatus.unavailable(EngineKind.OPENSSL_JNI,
                    "libcrypto did not load: " + libcryptoFailure.getMessage()
                            + " (install OpenSSL 3 or 1.1, or set -D" + EngineSettings.LIBCRYPTO + "=PATH)",
                    libcryptoFailure);
        }
        return EngineStatus.available(EngineKind.OPENSSL_JNI, version + " via JNI from " + path);
    }

    /**
     * The engine, if {@link #status()} is available. Most code should use
     * {@link io.sealpipe.engine.Engines} instead, which reports and logs the choice.
     *
     * @return the single instance, stateless and thread-safe
     * @throws IllegalStateException saying why the engine is unavailable, with the load failure
     *     as its cause
     */
    public static OpenSslJniEngine get() {
        EngineStatus status = status();
        if (!status.available()) {
            IllegalStateException e = new IllegalStateException("openssl-jni engine unavailable: " + status.reason());
            status.cause().ifPresent(e::initCause);
            throw e;
        }
        return INSTANCE;
    }

    /**
     * OpenSSL's version string.
     *
     * @return e.g. {@code "OpenSSL 3.0.19 27 Jan 2026"}, or null if libcrypto did not load
     *     through JNI
     */
    public static String opensslVersion() {
        return Loaded.VERSION;
    }

    /**
     * The libcrypto file loaded through JNI.
     *
     * @return its path, or null if it did not load
     */
    public static String opensslPath() {
        return Loaded.PATH;
    }

    /**
     * CPU feature bits from libsealpipe.so: from cpuid on x86 (bits: 1 AES-NI, 2 PCLMULQDQ, 4 AVX2,
     * 8 VAES, 16 VPCLMULQDQ, 32 AVX-512 F+DQ+BW+VL), from {@code getauxval(AT_HWCAP)} on aarch64
     * (1 AES, 2 PMULL: the ARMv8 Cryptography Extensions). Empty if the library did not load or
     * reads nothing on this architecture.
     *
     * @return the feature bits, or empty
     */
    public static OptionalInt cpuidFeatures() {
        if (Loaded.LIBRARY_FAILURE != null) {
            return OptionalInt.empty();
        }
        int bits = NativeCrypto.cpuFeatures();
        return (bits & NativeCrypto.CPU_KNOWN) == 0 ? OptionalInt.empty() : OptionalInt.of(bits & 0xff);
    }

    @Override
    public EngineKind kind() {
        return EngineKind.OPENSSL_JNI;
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        return new NativeStreamCipher("AES-CTR", NativeCrypto.AES_CTR, key, iv, true);
    }

    @Override
    public StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException {
        return new NativeStreamCipher("AES-CFB128", NativeCrypto.AES_CFB128, key, iv, encrypt);
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        return new NativeGcm(key);
    }

    @Override
    public Hmac newHmacSha256(byte[] key) throws GeneralSecurityException {
        return new NativeHmac(key);
    }

    @Override
    public String toString() {
        return kind().id();
    }

    /** Frees a native handle once, from close() or, for a forgotten object, the Cleaner. */
    private record Free(long handle, LongConsumer free) implements Runnable {
        @Override
        public void run() {
            free.accept(handle);
        }
    }

    private static String name(String algorithm, byte[] key) {
        return "AES-" + key.length * 8 + algorithm.substring(3) + " (openssl-jni)";
    }

    private static final class NativeStreamCipher extends BaseStreamCipher {
        private final long handle;
        private final boolean encrypt;
        private final Cleaner.Cleanable cleanable;

        NativeStreamCipher(String algorithm, int mode, byte[] key, byte[] iv, boolean encrypt)
                throws GeneralSecurityException {
            super(name(algorithm, key));
            Checks.aesKey(key);
            Checks.length("iv", iv, 16);
            get();
            this.encrypt = encrypt;
            this.handle = NativeCrypto.cipherNew(mode, key, iv, encrypt);
            this.cleanable = Cleaners.CLEANER.register(this, new Free(handle, NativeCrypto::cipherFree));
        }

        @Override
        protected long directAddress(ByteBuffer direct) {
            return NativeCrypto.directBufferAddress(direct);
        }

        @Override
        protected void engineReset(byte[] iv) {
            try {
                NativeCrypto.cipherReset(handle, iv, encrypt);
            } catch (InvalidAlgorithmParameterException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineUpdate(Object in, int inOffset, Object out, int outOffset, int length) {
            try {
                if (length <= NativeCrypto.SMALL_CALL && in instanceof byte[] inArray && out instanceof byte[] outArray) {
                    NativeCrypto.cipherUpdateSmall(handle, inArray, inOffset, outArray, outOffset, length);
                } else {
                    NativeCrypto.cipherUpdate(handle, in, inOffset, out, outOffset, length);
                }
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineClose() {
            cleanable.clean();
        }
    }

    private static final class NativeGcm extends BaseAeadCipher {
        private final long handle;
        private final Cleaner.Cleanable cleanable;

        NativeGcm(byte[] key) throws GeneralSecurityException {
            super(name("AES-GCM", key));
            Checks.aesKey(key);
            get();
            this.handle = NativeCrypto.cipherNew(NativeCrypto.AES_GCM, key, null, true);
            this.cleanable = Cleaners.CLEANER.register(this, new Free(handle, NativeCrypto::cipherFree));
        }

        @Override
        protected long directAddress(ByteBuffer direct) {
            return NativeCrypto.directBufferAddress(direct);
        }

        @Override
        protected int engineSeal(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                int outOffset) {
            try {
                return NativeCrypto.gcmSeal(handle, nonce, aad, in, inOffset, length, out, outOffset);
            } catch (InvalidAlgorithmParameterException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected int engineOpen(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                int outOffset) throws AEADBadTagException {
            try {
                return NativeCrypto.gcmOpen(handle, nonce, aad, in, inOffset, length, out, outOffset);
            } catch (InvalidAlgorithmParameterException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        /** All chunks in one native call: nonces computed in C, the context reused. */
        @Override
        protected void engineSealChunks(byte[] baseNonce, long firstChunk, Object in, int inOffset, int count,
                Object out, int outOffset) {
            try {
                NativeCrypto.gcmSealChunks(handle, baseNonce, firstChunk, in, inOffset, count, out, outOffset);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected int engineOpenChunks(byte[] baseNonce, long firstChunk, Object in, int inOffset, int count,
                Object out, int outOffset) {
            try {
                return NativeCrypto.gcmOpenChunks(handle, baseNonce, firstChunk, in, inOffset, count, out, outOffset);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineClose() {
            cleanable.clean();
        }
    }

    private static final class NativeHmac extends BaseHmac {
        private final long handle;
        private final Cleaner.Cleanable cleanable;

        NativeHmac(byte[] key) throws GeneralSecurityException {
            super("HMAC-SHA256 (openssl-jni)");
            get();
            this.handle = NativeCrypto.hmacNew(key);
            this.cleanable = Cleaners.CLEANER.register(this, new Free(handle, NativeCrypto::hmacFree));
        }

        @Override
        protected void engineUpdate(Object in, int offset, int length) {
            try {
                NativeCrypto.hmacUpdate(handle, in, offset, length);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineDoFinal(byte[] out, int offset) {
            try {
                NativeCrypto.hmacFinal(handle, out, offset);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineClose() {
            cleanable.clean();
        }
    }
}
