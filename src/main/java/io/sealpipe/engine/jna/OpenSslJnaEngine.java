package io.sealpipe.engine.jna;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;
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
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.util.Arrays;
import java.util.function.Supplier;
import javax.crypto.AEADBadTagException;

/**
 * The OpenSSL engine through JNA, for platforms where libsealpipe.so is not available. Same
 * contexts and calls as openssl-jni; byte[] data passes through a per-object native scratch
 * buffer in slices, direct ByteBuffers by address.
 *
 * <p>This class links against JNA, an optional dependency: it cannot even be loaded without it,
 * so {@code Engines} touches it only when JNA is on the class path. Applications get the engine
 * from {@link io.sealpipe.engine.Engines}, which checks that first and reports why the engine is
 * unavailable; the static methods here are the probe and accessors {@code Engines} uses. The
 * engine is stateless and thread-safe; the ciphers it makes are not, and free their native
 * context and scratch memory (zeroed) on {@code close()} or, if forgotten, through a Cleaner.
 */
public final class OpenSslJnaEngine implements CryptoEngine {
    private static final int SLICE = 64 * 1024;
    private static final OpenSslJnaEngine INSTANCE = new OpenSslJnaEngine();

    private OpenSslJnaEngine() {}

    private static final class Loaded {
        static final Throwable FAILURE;
        static final String VERSION;
        static final String PATH;

        static {
            Throwable failure = null;
            String version = null;
            String path = null;
            try {
                addressOf(ByteBuffer.allocateDirect(1)); // JNA's own native part loads, or this throws
                Buffers.readAddressesWith(OpenSslJnaEngine::addressOf); // for every engine's overlap check
                NativeLibrary library = LibCrypto.load(EngineSettings.fromSystemProperties().libcrypto());
                version = LibCrypto.OpenSSL_version(0);
                path = mappedPath(library.getFile() != null ? library.getFile().getPath() : library.getName());
            } catch (Throwable t) {
                failure = t;
            }
            FAILURE = failure;
            VERSION = version;
            PATH = path;
        }
    }

    /** The file a library name resolved to, from /proc/self/maps where it exists; else the name. */
    private static String mappedPath(String name) {
        String file = java.nio.file.Path.of(name).getFileName().toString();
        try (java.util.stream.Stream<String> maps = java.nio.file.Files.lines(java.nio.file.Path.of("/proc/self/maps"))) {
            return maps.map(line -> line.substring(line.lastIndexOf(' ') + 1))
                    .filter(p -> p.endsWith("/" + file))
                    .findFirst()
                    .orElse(name);
        } catch (java.io.IOException | RuntimeException e) {
            return name;
        }
    }

    /**
     * Whether JNA and libcrypto loaded. They are loaded once per JVM, on first use: libcrypto
     * from {@code sealpipe.openssl.libcrypto} or the default names. Never throws.
     *
     * @return available with OpenSSL's version and file, or unavailable with the reason
     */
    public static EngineStatus status() {
        try {
            if (Loaded.FAILURE != null) {
                return EngineStatus.unavailable(EngineKind.OPENSSL_JNA,
                        Loaded.FAILURE.getMessage() + " (install OpenSSL 3 or 1.1, or set -D"
                                + EngineSettings.LIBCRYPTO + "=PATH)", Loaded.FAILURE);
            }
            return EngineStatus.available(EngineKind.OPENSSL_JNA, Loaded.VERSION + " via JNA from " + Loaded.PATH);
        } catch (LinkageError e) { // JNA's own native part failed to load
            return EngineStatus.unavailable(EngineKind.OPENSSL_JNA, "JNA did not load: " + e, e);
        }
    }

    /**
     * The engine, if {@link #status()} is available. Most code should use
     * {@link io.sealpipe.engine.Engines} instead, which reports and logs the choice.
     *
     * @return the single instance, stateless and thread-safe
     * @throws IllegalStateException saying why the engine is unavailable, with the load failure
     *     as its cause
     */
    public static OpenSslJnaEngine get() {
        EngineStatus status = status();
        if (!status.available()) {
            IllegalStateException e = new IllegalStateException("openssl-jna engine unavailable: " + status.reason());
            status.cause().ifPresent(e::initCause);
            throw e;
        }
        return INSTANCE;
    }

    /**
     * OpenSSL's version string.
     *
     * @return e.g. {@code "OpenSSL 3.0.19 27 Jan 2026"}, or null if libcrypto did not load
     *     through JNA
     */
    public static String opensslVersion() {
        return status().available() ? Loaded.VERSION : null;
    }

    /**
     * The libcrypto file loaded through JNA.
     *
     * @return its path, or null if it did not load
     */
    public static String opensslPath() {
        return status().available() ? Loaded.PATH : null;
    }

    @Override
    public EngineKind kind() {
        return EngineKind.OPENSSL_JNA;
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        int bits = Checks.aesKey(key) * 8;
        return new JnaStreamCipher("AES-" + bits + "-CTR (openssl-jna)", cipherFor(bits, LibCrypto::EVP_aes_128_ctr,
                LibCrypto::EVP_aes_192_ctr, LibCrypto::EVP_aes_256_ctr), key, iv, true);
    }

    @Override
    public StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException {
        int bits = Checks.aesKey(key) * 8;
        return new JnaStreamCipher("AES-" + bits + "-CFB128 (openssl-jna)", cipherFor(bits,
                LibCrypto::EVP_aes_128_cfb128, LibCrypto::EVP_aes_192_cfb128, LibCrypto::EVP_aes_256_cfb128),
                key, iv, encrypt);
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        int bits = Checks.aesKey(key) * 8;
        return new JnaGcm("AES-" + bits + "-GCM (openssl-jna)", cipherFor(bits, LibCrypto::EVP_aes_128_gcm,
                LibCrypto::EVP_aes_192_gcm, LibCrypto::EVP_aes_256_gcm), key);
    }

    @Override
    public Hmac newHmacSha256(byte[] key) throws GeneralSecurityException {
        Checks.hmacKey(key);
        return new JnaHmac(key);
    }

    @Override
    public String toString() {
        return kind().id();
    }

    private static Pointer cipherFor(int bits, Supplier<Pointer> aes128, Supplier<Pointer> aes192,
            Supplier<Pointer> aes256) {
        get();
        return switch (bits) {
            case 128 -> aes128.get();
            case 192 -> aes192.get();
            default -> aes256.get();
        };
    }

    /** Drains OpenSSL's error queue into a message: "what (OpenSSL: reason)". */
    private static String error(String what) {
        NativeLong first = LibCrypto.ERR_get_error();
        String reason = "no error queued";
        if (first.longValue() != 0) {
            byte[] buf = new byte[256];
            LibCrypto.ERR_error_string_n(first, buf, new NativeLong(buf.length));
            reason = Native.toString(buf, StandardCharsets.US_ASCII.name());
        }
        while (LibCrypto.ERR_get_error().longValue() != 0) {
            // drain the rest
        }
        return what + " (OpenSSL: " + reason + ")";
    }

    private static void check(int ok, String what) {
        if (ok != 1) {
            throw new IllegalStateException(error(what));
        }
    }

    /** Native resources of one object: freed by close() or the Cleaner, once. */
    private record Resources(Pointer ctx, boolean hmac, Memory scratch) implements Runnable {
        @Override
        public void run() {
            if (hmac) {
                LibCrypto.HMAC_CTX_free(ctx);
            } else {
                LibCrypto.EVP_CIPHER_CTX_free(ctx);
            }
            if (scratch != null) {
                scratch.clear();
                scratch.close();
            }
        }
    }

    /** A direct ByteBuffer's address, for the base classes' check that input and output do not overlap. */
    private static long addressOf(ByteBuffer direct) {
        return Pointer.nativeValue(Native.getDirectBufferPointer(direct));
    }

    /** A direct ByteBuffer's address at offset, or null for a byte[]. */
    private static Pointer address(Object base, int offset) {
        return base instanceof ByteBuffer b ? Native.getDirectBufferPointer(b).share(offset) : null;
    }

    private static Pointer newContext() {
        Pointer ctx = LibCrypto.EVP_CIPHER_CTX_new();
        if (ctx == null) {
            throw new OutOfMemoryError("EVP_CIPHER_CTX_new failed");
        }
        return ctx;
    }

    /**
     * Runs EVP_CipherUpdate over length bytes from in to out, through the scratch buffer for
     * byte[] sides; returns the bytes written.
     */
    private static int evpUpdate(Pointer ctx, Memory scratch, Object in, int inOffset, Object out, int outOffset,
            int length, int[] outl) {
        Pointer inAddress = address(in, inOffset);
        Pointer outAddress = address(out, outOffset);
        if (inAddress != null && outAddress != null) {
            check(LibCrypto.EVP_CipherUpdate(ctx, outAddress, outl, inAddress, length), "EVP_CipherUpdate failed");
            return outl[0];
        }
        int written = 0;
        for (int done = 0; done < length; ) {
            int n = Math.min(SLICE, length - done);
            Pointer src = inAddress != null ? inAddress.share(done) : scratch;
            if (inAddress == null) {
                scratch.write(0, (byte[]) in, inOffset + done, n);
            }
            Pointer dst = outAddress != null ? outAddress.share(written) : scratch;
            check(LibCrypto.EVP_CipherUpdate(ctx, dst, outl, src, n), "EVP_CipherUpdate failed");
            if (outAddress == null) {
                scratch.read(0, (byte[]) out, outOffset + written, outl[0]);
            }
            written += outl[0];
            done += n;
        }
        return written;
    }

    private static final class JnaStreamCipher extends BaseStreamCipher {
        private final Pointer ctx;
        private final Memory scratch = new Memory(SLICE);
        private final int encrypt;
        private final int[] outl = new int[1];
        private final Cleaner.Cleanable cleanable;

        JnaStreamCipher(String name, Pointer cipher, byte[] key, byte[] iv, boolean encrypt)
                throws InvalidKeyException {
            super(name);
            Checks.length("iv", iv, 16);
            this.encrypt = encrypt ? 1 : 0;
            this.ctx = newContext();
            this.cleanable = Cleaners.CLEANER.register(this, new Resources(ctx, false, scratch));
            if (LibCrypto.EVP_CipherInit_ex(ctx, cipher, null, key, iv, this.encrypt) != 1) {
                String message = error("EVP_CipherInit_ex failed");
                cleanable.clean();
                throw new InvalidKeyException(message);
            }
        }

        @Override
        protected long directAddress(ByteBuffer direct) {
            return addressOf(direct);
        }

        @Override
        protected void engineReset(byte[] iv) {
            try {
                check(LibCrypto.EVP_CipherInit_ex(ctx, null, null, null, iv, encrypt), "EVP_CipherInit_ex (new IV) failed");
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineUpdate(Object in, int inOffset, Object out, int outOffset, int length) {
            try {
                evpUpdate(ctx, scratch, in, inOffset, out, outOffset, length, outl);
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineClose() {
            cleanable.clean();
        }
    }

    private static final class JnaGcm extends BaseAeadCipher {
        private final Pointer ctx;
        private final Memory scratch = new Memory(SLICE);
        private final int[] outl = new int[1];
        private final byte[] tag = new byte[TAG_LENGTH];
        private final Cleaner.Cleanable cleanable;

        JnaGcm(String name, Pointer cipher, byte[] key) throws InvalidKeyException {
            super(name);
            this.ctx = newContext();
            this.cleanable = Cleaners.CLEANER.register(this, new Resources(ctx, false, scratch));
            if (LibCrypto.EVP_CipherInit_ex(ctx, cipher, null, key, null, 1) != 1) {
                String message = error("EVP_CipherInit_ex failed");
                cleanable.clean();
                throw new InvalidKeyException(message);
            }
        }

        private void start(byte[] nonce, byte[] aad, int encrypt) {
            check(LibCrypto.EVP_CipherInit_ex(ctx, null, null, null, nonce, encrypt), "EVP_CipherInit_ex (nonce) failed");
            if (aad != null) {
                for (int done = 0; done < aad.length; ) {
                    int n = Math.min(SLICE, aad.length - done);
                    scratch.write(0, aad, done, n);
                    check(LibCrypto.EVP_CipherUpdate(ctx, null, outl, scratch, n), "AAD update failed");
                    done += n;
                }
            }
        }

        @Override
        protected long directAddress(ByteBuffer direct) {
            return addressOf(direct);
        }

        @Override
        protected int engineSeal(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                int outOffset) {
            try {
                start(nonce, aad, 1);
                int written = evpUpdate(ctx, scratch, in, inOffset, out, outOffset, length, outl);
                check(LibCrypto.EVP_CipherFinal_ex(ctx, scratch, outl), "EVP_CipherFinal_ex failed");
                check(LibCrypto.EVP_CIPHER_CTX_ctrl(ctx, LibCrypto.EVP_CTRL_GCM_GET_TAG, TAG_LENGTH, tag),
                        "EVP_CTRL_GCM_GET_TAG failed");
                put(tag, out, outOffset + written);
                return written + TAG_LENGTH;
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected int engineOpen(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                int outOffset) throws AEADBadTagException {
            int dataLength = length - TAG_LENGTH;
            try {
                start(nonce, aad, 0);
                get(in, inOffset + dataLength, tag);
                int written = evpUpdate(ctx, scratch, in, inOffset, out, outOffset, dataLength, outl);
                check(LibCrypto.EVP_CIPHER_CTX_ctrl(ctx, LibCrypto.EVP_CTRL_GCM_SET_TAG, TAG_LENGTH, tag),
                        "EVP_CTRL_GCM_SET_TAG failed");
                if (LibCrypto.EVP_CipherFinal_ex(ctx, scratch, outl) != 1) {
                    wipe(out, outOffset, dataLength);
                    throw new AEADBadTagException(error("AES-GCM authentication failed: tag mismatch"));
                }
                return written;
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        private static void put(byte[] src, Object out, int offset) {
            if (out instanceof byte[] array) {
                System.arraycopy(src, 0, array, offset, src.length);
            } else {
                ((ByteBuffer) out).put(offset, src);
            }
        }

        private static void get(Object in, int offset, byte[] dst) {
            if (in instanceof byte[] array) {
                System.arraycopy(array, offset, dst, 0, dst.length);
            } else {
                ((ByteBuffer) in).get(offset, dst);
            }
        }

        private static void wipe(Object out, int offset, int length) {
            if (out instanceof byte[] array) {
                Arrays.fill(array, offset, offset + length, (byte) 0);
            } else {
                ((ByteBuffer) out).put(offset, new byte[length]);
            }
        }

        @Override
        protected void engineClose() {
            cleanable.clean();
        }
    }

    private static final class JnaHmac extends BaseHmac {
        private final Pointer ctx;
        private final Memory scratch = new Memory(SLICE);
        private final int[] macLength = new int[1];
        private final Cleaner.Cleanable cleanable;

        JnaHmac(byte[] key) throws InvalidKeyException {
            super("HMAC-SHA256 (openssl-jna)");
            get();
            Pointer ctx = LibCrypto.HMAC_CTX_new();
            if (ctx == null) {
                throw new OutOfMemoryError("HMAC_CTX_new failed");
            }
            this.ctx = ctx;
            this.cleanable = Cleaners.CLEANER.register(this, new Resources(ctx, true, scratch));
            if (LibCrypto.HMAC_Init_ex(ctx, key, key.length, LibCrypto.EVP_sha256(), null) != 1) {
                String message = error("HMAC_Init_ex failed");
                cleanable.clean();
                throw new InvalidKeyException(message);
            }
        }

        @Override
        protected void engineUpdate(Object in, int offset, int length) {
            try {
                Pointer address = address(in, offset);
                if (address != null) {
                    check(LibCrypto.HMAC_Update(ctx, address, new NativeLong(length)), "HMAC_Update failed");
                    return;
                }
                for (int done = 0; done < length; ) {
                    int n = Math.min(SLICE, length - done);
                    scratch.write(0, (byte[]) in, offset + done, n);
                    check(LibCrypto.HMAC_Update(ctx, scratch, new NativeLong(n)), "HMAC_Update failed");
                    done += n;
                }
            } finally {
                Reference.reachabilityFence(this);
            }
        }

        @Override
        protected void engineDoFinal(byte[] out, int offset) {
            try {
                byte[] mac = new byte[32];
                check(LibCrypto.HMAC_Final(ctx, mac, macLength), "HMAC_Final failed");
                check(LibCrypto.HMAC_Init_ex(ctx, null, 0, null, null), "HMAC_Init_ex (restart) failed");
                System.arraycopy(mac, 0, out, offset, mac.length);
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
