package io.sealpipe.engine.jce;

import io.sealpipe.engine.AeadCipher;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.Hmac;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.StreamCipher;
import io.sealpipe.internal.BaseAeadCipher;
import io.sealpipe.internal.BaseHmac;
import io.sealpipe.internal.BaseStreamCipher;
import io.sealpipe.internal.Checks;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.security.Security;
import java.security.spec.AlgorithmParameterSpec;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.NoSuchPaddingException;
import javax.crypto.SecretKey;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;

/**
 * The engine on {@code javax.crypto}, with a chosen provider or the JDK's default.
 *
 * <p>Data is fed to the provider in slices of at most {@link #SLICE} bytes. HotSpot uses its
 * AES-NI and carry-less-multiply intrinsics only from callers that C2 has compiled, and C2
 * compiles a method after it has been called often; with one large call the callers stay cold
 * and the plain Java AES/GHASH loops run instead (about 60 MB/s for GCM in 1 MiB calls for the
 * first ten seconds or more). Slicing makes the callers hot at once, so a 1 MiB call is as fast
 * per byte as a 16 KiB one (docs/PERFORMANCE.md). Slices are right in place and for disjoint
 * ranges only: where the output starts inside the input, a slice's output overwrites the next
 * slice's input before it is read. Such a partial overlap is refused before the first slice
 * ({@code Buffers.checkOverlap}). Two direct buffers that are views of one memory are found by
 * their addresses, which libsealpipe or JNA reads once loaded ({@link io.sealpipe.engine.Engines}
 * loads them where they load), and {@code sun.misc.Unsafe} reads before that, so an engine made
 * directly finds them too. Where Unsafe is unavailable (the module {@code jdk.unsupported} not
 * resolved, a SecurityManager, {@code --sun-misc-unsafe-memory-access=deny}) and neither
 * library has loaded, such views are not compared, and a partial overlap of more than a slice
 * gives wrong bytes (docs/engines.md, "Input and output in one memory").
 *
 * <p>Keys: each cipher keeps one copy of its key in a key object of its own (not a
 * {@code SecretKeySpec}, which cannot be wiped), from which the provider takes a fresh copy at
 * every {@code Cipher.init}; {@code close()} zeroes it. The provider keeps its own copies. SunJCE
 * (as checked on JDK 17 and 25) keeps, until the {@code Cipher} or {@code Mac} is re-initialised
 * with another key or collected: for AES the raw key and its encryption and decryption key
 * schedules; for GCM also the raw key of its last encryption; for HMAC the key XORed with its
 * pads. The copies it takes from the key object at {@code init} it zeroes itself, while GCM's
 * GHASH subkey (derived from the key, not the key) is dropped after each message without being
 * overwritten. So {@code close()} also re-initialises every {@code Cipher} and {@code Mac} with
 * an all-zero key, upon which SunJCE overwrites the saved keys, the schedules and the pads. Other
 * providers may keep more, and a cipher never closed keeps everything until it is collected.
 *
 * <p>Usually reached through {@link io.sealpipe.engine.Engines} ({@code sealpipe.jce.provider}
 * names the provider); {@link #withProvider(String)} makes one directly, without the report.
 * {@link #status(String)} is the probe {@code Engines} runs. The engine is stateless and
 * thread-safe; the ciphers it makes are not.
 *
 * <p>The accp engine is this engine on the Amazon Corretto Crypto Provider, made with
 * {@link #onNativeProvider(Provider, EngineKind)}: a provider whose AES-GCM and HMAC run in
 * native code gets each message in one call (no slices, no two-pass open: there is no C2 to
 * wait for, and every call crosses JNI), and since such a provider keeps the key bytes it took
 * from the key object (accp does, for as long as the key object stays the same), the key object
 * lives as long as the cipher and zeroes every copy it handed out when the cipher is closed.
 */
public final class JceEngine implements CryptoEngine {
    /** Largest slice passed to one provider call. */
    public static final int SLICE = 16 * 1024;

    private static final String CTR = "AES/CTR/NoPadding";
    private static final String CFB = "AES/CFB/NoPadding";
    private static final String ECB = "AES/ECB/NoPadding";
    private static final String GCM = "AES/GCM/NoPadding";
    private static final String HMAC = "HmacSHA256";

    private final Provider provider;
    private final EngineKind kind;
    private final boolean nativeProvider; // one call per message; key copies zeroed at close

    private JceEngine(Provider provider, EngineKind kind, boolean nativeProvider) {
        this.provider = provider;
        this.kind = kind;
        this.nativeProvider = nativeProvider;
    }

    /**
     * The engine on the JDK's default providers.
     *
     * @return a new engine (stateless and thread-safe, like every engine)
     */
    public static JceEngine withDefaultProvider() {
        return new JceEngine(null, EngineKind.JCE, false);
    }

    /**
     * The engine on a provider object whose AES-GCM and HMAC-SHA256 run in native code (accp),
     * reported as another kind. The provider need not be installed in {@link Security}. AES-CTR
     * and AES-CFB come from the provider only if {@code kind} supports them; otherwise they
     * throw {@link NoSuchAlgorithmException}.
     *
     * @param provider the provider object
     * @param kind the kind this engine reports, and whose operations it offers
     * @return a new engine on that provider
     */
    public static JceEngine onNativeProvider(Provider provider, EngineKind kind) {
        return new JceEngine(java.util.Objects.requireNonNull(provider, "provider"), kind, true);
    }

    /**
     * The engine on the named provider.
     *
     * @param name a provider installed in {@link Security}, or {@code null} for the default ones
     * @return a new engine on that provider
     * @throws NoSuchAlgorithmException naming the provider and the installed ones if it is not
     *     installed
     */
    public static JceEngine withProvider(String name) throws NoSuchAlgorithmException {
        if (name == null) {
            return withDefaultProvider();
        }
        Provider p = Security.getProvider(name);
        if (p == null) {
            throw new NoSuchAlgorithmException("JCE provider '" + name + "' is not installed; installed: "
                    + Arrays.stream(Security.getProviders()).map(Provider::getName).toList());
        }
        return new JceEngine(p, EngineKind.JCE, false);
    }

    /**
     * Whether the provider offers every algorithm this engine needs (AES-GCM, AES-CTR,
     * AES-CFB, HMAC-SHA256). Never throws.
     *
     * @param providerName a provider name, or {@code null} for the default ones
     * @return available, naming the provider that serves AES-GCM, or unavailable with the
     *     missing algorithm
     */
    public static EngineStatus status(String providerName) {
        try {
            JceEngine engine = withProvider(providerName);
            String used = engine.cipher(GCM).getProvider().getName();
            engine.cipher(CTR);
            engine.cipher(CFB);
            engine.mac();
            return EngineStatus.available(EngineKind.JCE, "javax.crypto, provider " + used + " (Java "
                    + System.getProperty("java.version") + ")");
        } catch (GeneralSecurityException e) {
            return EngineStatus.unavailable(EngineKind.JCE, "JCE lacks an algorithm: " + e.getMessage(), e);
        }
    }

    @Override
    public EngineKind kind() {
        return kind;
    }

    private void requireSupported(Operation op) throws NoSuchAlgorithmException {
        if (!kind.supports(op)) {
            throw new NoSuchAlgorithmException(kind.id() + " has no " + op.id() + "; use another engine for it"
                    + " (auto runs each operation on an engine that has it)");
        }
    }

    Cipher cipher(String transformation) throws NoSuchAlgorithmException, NoSuchPaddingException {
        return provider == null ? Cipher.getInstance(transformation) : Cipher.getInstance(transformation, provider);
    }

    Mac mac() throws NoSuchAlgorithmException {
        return provider == null ? Mac.getInstance(HMAC) : Mac.getInstance(HMAC, provider);
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        requireSupported(Operation.CTR);
        return new JceStreamCipher(kind.id(), "CTR", cipher(CTR), key, iv, true);
    }

    @Override
    public StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException {
        requireSupported(Operation.CFB);
        return new JceCfb128(kind.id(), cipher(CFB), cipher(ECB), key, iv, encrypt);
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        Checks.aesKey(key);
        if (nativeProvider) {
            return new JceGcm(kind.id(), cipher(GCM), null, null, new OwnKey(key, "AES", true));
        }
        return new JceGcm(kind.id(), cipher(GCM), cipher(GCM), cipher(CTR), new OwnKey(key, "AES", false));
    }

    @Override
    public Hmac newHmacSha256(byte[] key) throws GeneralSecurityException {
        Checks.hmacKey(key);
        Mac mac = mac();
        OwnKey own = new OwnKey(key, HMAC, nativeProvider);
        try {
            mac.init(own);
        } catch (GeneralSecurityException | RuntimeException e) {
            own.destroy();
            throw e;
        }
        if (!nativeProvider) {
            own.destroy(); // SunJCE's Mac keeps what it needs (the padded key), so ours can go at once
            return new JceHmac(kind.id(), mac, null);
        }
        return new JceHmac(kind.id(), mac, own);
    }

    @Override
    public String toString() {
        return kind().id();
    }

    private static final OwnKey ZERO_AES_KEY = new OwnKey(new byte[16], "AES", false);
    private static final OwnKey ZERO_HMAC_KEY = new OwnKey(new byte[32], HMAC, false);
    private static final IvParameterSpec ZERO_COUNTER = new IvParameterSpec(new byte[16]);
    private static final GCMParameterSpec ZERO_NONCE =
            new GCMParameterSpec(AeadCipher.TAG_LENGTH * 8, new byte[AeadCipher.NONCE_LENGTH]);

    /**
     * Re-initialises {@code c} to encrypt with an all-zero key, so that the provider lets go of
     * the real one (see the class comment for what SunJCE then overwrites). Best effort: a
     * provider that refuses (for example GCM, if its last encryption used this very key and
     * nonce, then there is nothing secret to drop) keeps what it has, and close() still succeeds.
     */
    private static void retire(Cipher c, AlgorithmParameterSpec params) {
        try {
            c.init(Cipher.ENCRYPT_MODE, ZERO_AES_KEY, params);
        } catch (GeneralSecurityException | RuntimeException e) {
            // Nothing better to do: the Cipher is dropped with the closed object either way.
        }
    }

    /**
     * A raw key that we can zero, unlike {@code SecretKeySpec}. Providers get a fresh copy from
     * {@link #getEncoded()} at each {@code init}; SunJCE zeroes that copy once it has made its own.
     * A provider that keeps the copy (accp keeps it while the key object stays the same, and asks
     * for it once per key object) gets a tracked one, zeroed by {@link #destroy()}.
     */
    private static final class OwnKey implements SecretKey {
        private static final long serialVersionUID = 1L;
        private final byte[] bytes;
        private final String algorithm;
        private final transient java.util.List<byte[]> handedOut; // null: the provider zeroes its copies; guarded by this
        private volatile boolean destroyed;

        OwnKey(byte[] bytes, String algorithm, boolean trackCopies) {
            this.bytes = bytes.clone();
            this.algorithm = algorithm;
            this.handedOut = trackCopies ? new java.util.ArrayList<>() : null;
        }

        @Override
        public String getAlgorithm() {
            return algorithm;
        }

        @Override
        public String getFormat() {
            return "RAW";
        }

        /** Under the lock that {@link #destroy()} takes: a copy is whole or refused, never half zeroed. */
        @Override
        public synchronized byte[] getEncoded() {
            if (destroyed) {
                throw new IllegalStateException(algorithm + " key has been destroyed");
            }
            byte[] copy = bytes.clone();
            if (handedOut != null) {
                handedOut.add(copy);
            }
            return copy;
        }

        @Override
        public synchronized void destroy() {
            destroyed = true;
            Arrays.fill(bytes, (byte) 0);
            if (handedOut != null) {
                handedOut.forEach(copy -> Arrays.fill(copy, (byte) 0));
                handedOut.clear();
            }
        }

        @Override
        public boolean isDestroyed() {
            return destroyed;
        }

        @Override
        public String toString() {
            return algorithm + " key (" + bytes.length + " bytes" + (destroyed ? ", destroyed" : "") + ")";
        }
    }

    /** A byte[] or direct ByteBuffer range as a ByteBuffer view. */
    private static ByteBuffer view(Object base, int offset, int length) {
        return base instanceof byte[] array
                ? ByteBuffer.wrap(array).slice(offset, length)
                : ((ByteBuffer) base).slice(offset, length);
    }

    private static final class JceStreamCipher extends BaseStreamCipher {
        private final Cipher cipher;
        private final OwnKey key; // for engineReset
        private final int mode;
        private byte[] inScratch;  // plaintext or ciphertext slices; zeroed on close
        private byte[] outScratch;

        JceStreamCipher(String engine, String algorithm, Cipher cipher, byte[] key, byte[] iv, boolean encrypt)
                throws GeneralSecurityException {
            super("AES-" + Checks.aesKey(key) * 8 + "-" + algorithm + " (" + engine + ")");
            Checks.length("iv", iv, 16);
            this.cipher = cipher;
            this.key = new OwnKey(key, "AES", false);
            this.mode = encrypt ? Cipher.ENCRYPT_MODE : Cipher.DECRYPT_MODE;
            cipher.init(mode, this.key, new IvParameterSpec(iv));
        }

        @Override
        protected void engineReset(byte[] iv) {
            try {
                cipher.init(mode, key, new IvParameterSpec(iv));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot reset " + this + ": " + e.getMessage(), e);
            }
        }

        @Override
        protected void engineUpdate(Object in, int inOffset, Object out, int outOffset, int length) {
            try {
                for (int done = 0; done < length; ) {
                    int n = Math.min(SLICE, length - done);
                    updateSlice(in, inOffset + done, out, outOffset + done, n);
                    done += n;
                }
            } catch (ShortBufferException e) {
                throw new IllegalStateException(this + ": " + e.getMessage(), e);
            }
        }

        /**
         * One slice of at most {@link #SLICE} bytes, always as a byte[] call to SunJCE: its
         * ByteBuffer path copies direct buffers through new temporary arrays, and it copies an
         * in-place input into a new array on every call. Our own scratch arrays allocate nothing.
         */
        private void updateSlice(Object in, int inOffset, Object out, int outOffset, int n) throws ShortBufferException {
            byte[] src;
            int srcOffset;
            if (in instanceof byte[] inArray && inArray != out) {
                src = inArray;
                srcOffset = inOffset;
            } else {
                src = inScratch == null ? inScratch = new byte[SLICE] : inScratch;
                srcOffset = 0;
                if (in instanceof byte[] inArray) {
                    System.arraycopy(inArray, inOffset, src, 0, n);
                } else {
                    ((ByteBuffer) in).get(inOffset, src, 0, n);
                }
            }
            if (out instanceof byte[] outArray) {
                cipher.update(src, srcOffset, n, outArray, outOffset);
            } else {
                byte[] dst = outScratch == null ? outScratch = new byte[SLICE] : outScratch;
                cipher.update(src, srcOffset, n, dst, 0);
                ((ByteBuffer) out).put(outOffset, dst, 0, n);
            }
        }

        @Override
        protected void engineClose() {
            key.destroy();
            retire(cipher, ZERO_COUNTER);
            for (byte[] b : new byte[][] {inScratch, outScratch}) {
                if (b != null) {
                    Arrays.fill(b, (byte) 0);
                }
            }
        }
    }

    /**
     * AES-CFB128 that, like OpenSSL's, returns every byte at once. SunJCE's CFB holds back a
     * partial block until it is complete, so whole blocks go to SunJCE and a partial block is
     * finished here: its keystream is AES(previous ciphertext block), from an ECB cipher, and
     * SunJCE restarts from the completed block.
     */
    private static final class JceCfb128 extends BaseStreamCipher {
        private final Cipher cfb;
        private final Cipher ecb;
        private final OwnKey key; // for restarting cfb at each block
        private final int mode;
        private final byte[] register = new byte[16];   // the ciphertext block CFB encrypts next
        private final byte[] keystream = new byte[16];  // AES(register) while inside a block
        private final byte[] partial = new byte[16];    // ciphertext of the block in progress
        private int used;                               // bytes of the current block done (0..15)
        private byte[] scratch;

        JceCfb128(String engine, Cipher cfb, Cipher ecb, byte[] key, byte[] iv, boolean encrypt)
                throws GeneralSecurityException {
            super("AES-" + Checks.aesKey(key) * 8 + "-CFB128 (" + engine + ")");
            Checks.length("iv", iv, 16);
            this.cfb = cfb;
            this.ecb = ecb;
            this.key = new OwnKey(key, "AES", false);
            this.mode = encrypt ? Cipher.ENCRYPT_MODE : Cipher.DECRYPT_MODE;
            ecb.init(Cipher.ENCRYPT_MODE, this.key);
            engineReset(iv);
        }

        @Override
        protected void engineReset(byte[] iv) {
            System.arraycopy(iv, 0, register, 0, 16);
            used = 0;
            restartAtRegister();
        }

        private void restartAtRegister() {
            try {
                cfb.init(mode, key, new IvParameterSpec(register));
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot restart " + this + ": " + e.getMessage(), e);
            }
        }

        @Override
        protected void engineUpdate(Object in, int inOffset, Object out, int outOffset, int length) {
            if (in instanceof byte[] inArray && out instanceof byte[] outArray) {
                update(inArray, inOffset, outArray, outOffset, length);
                return;
            }
            if (scratch == null) {
                scratch = new byte[SLICE];
            }
            ByteBuffer src = view(in, inOffset, length);
            ByteBuffer dst = view(out, outOffset, length);
            while (src.hasRemaining()) {
                int n = Math.min(src.remaining(), scratch.length);
                src.get(scratch, 0, n);
                update(scratch, 0, scratch, 0, n);
                dst.put(scratch, 0, n);
            }
        }

        private void update(byte[] in, int inOffset, byte[] out, int outOffset, int length) {
            int done = 0;
            while (used > 0 && done < length) { // finish the block in progress
                step(in, inOffset + done, out, outOffset + done);
                done++;
            }
            int whole = (length - done) & ~15;
            if (whole > 0) {
                // The last ciphertext block becomes the register; read it before an in-place decrypt.
                if (mode == Cipher.DECRYPT_MODE) {
                    System.arraycopy(in, inOffset + done + whole - 16, register, 0, 16);
                }
                try {
                    for (int d = 0; d < whole; ) {
                        int n = Math.min(SLICE, whole - d);
                        d += cfb.update(in, inOffset + done + d, n, out, outOffset + done + d);
                    }
                } catch (ShortBufferException e) {
                    throw new IllegalStateException(this + ": " + e.getMessage(), e);
                }
                if (mode == Cipher.ENCRYPT_MODE) {
                    System.arraycopy(out, outOffset + done + whole - 16, register, 0, 16);
                }
                done += whole;
            }
            if (done < length) { // start a block that this call does not complete
                try {
                    ecb.doFinal(register, 0, 16, keystream, 0);
                } catch (GeneralSecurityException e) {
                    throw new IllegalStateException(this + ": " + e.getMessage(), e);
                }
                while (done < length) {
                    step(in, inOffset + done, out, outOffset + done);
                    done++;
                }
            }
        }

        /** One byte of the block in progress; at the block's end SunJCE restarts from it. */
        private void step(byte[] in, int inIndex, byte[] out, int outIndex) {
            byte b = in[inIndex];
            byte transformed = (byte) (b ^ keystream[used]);
            out[outIndex] = transformed;
            partial[used++] = mode == Cipher.ENCRYPT_MODE ? transformed : b;
            if (used == 16) {
                System.arraycopy(partial, 0, register, 0, 16);
                used = 0;
                restartAtRegister();
            }
        }

        @Override
        protected void engineClose() {
            key.destroy();
            retire(cfb, ZERO_COUNTER);
            retire(ecb, null);
            Arrays.fill(keystream, (byte) 0);
            Arrays.fill(partial, (byte) 0);
            if (scratch != null) {
                Arrays.fill(scratch, (byte) 0);
            }
        }
    }

    /**
     * AES-GCM on JCE. Sealing streams through the provider in slices. Opening a message larger
     * than a slice cannot: SunJCE buffers a whole GCM decryption and runs GHASH over it in one
     * call, whose caller reaches C2 (and so the intrinsic) only after half a minute of 1 MiB
     * calls (about 60 MB/s until then). So a large open uses two sliced passes built from GCM's definition: decrypt with
     * AES-CTR from counter block nonce || 2, then seal the plaintext again with GCM to recompute
     * the tag and compare it in constant time ({@link MessageDigest#isEqual}). On a mismatch the
     * plaintext is wiped before the exception.
     *
     * <p>On a native provider ({@code verifier} and {@code ctr} null) every message is one
     * {@code doFinal}: the provider authenticates before it writes plaintext.
     */
    private static final class JceGcm extends BaseAeadCipher {
        private final Cipher cipher;
        private final Cipher verifier; // null on a native provider
        private final Cipher ctr;      // null on a native provider
        private final int slice;       // largest input of one provider call
        private final OwnKey key; // for the init of every message
        private final byte[] counterBlock = new byte[16];
        private final byte[] tag = new byte[TAG_LENGTH];
        private byte[] lastVerifierNonce;
        private ByteBuffer scratch;

        JceGcm(String engine, Cipher cipher, Cipher verifier, Cipher ctr, OwnKey key) {
            super("AES-" + key.bytes.length * 8 + "-GCM (" + engine + ")");
            this.cipher = cipher;
            this.verifier = verifier;
            this.ctr = ctr;
            this.slice = ctr == null ? Integer.MAX_VALUE : SLICE;
            this.key = key;
        }

        private void start(Cipher c, int mode, byte[] nonce, byte[] aad) {
            try {
                c.init(mode, key, new GCMParameterSpec(TAG_LENGTH * 8, nonce));
            } catch (GeneralSecurityException e) {
                // SunJCE refuses to encrypt twice with one key and nonce.
                throw new IllegalArgumentException("AES-GCM with this nonce: " + e.getMessage(), e);
            }
            if (aad != null && aad.length > 0) {
                c.updateAAD(aad);
            }
        }

        /**
         * Whole chunks of the chunked format, one {@code doFinal} each: a chunk fits one call, and
         * SunJCE's {@code update} path copies a decryption's input into a growing buffer first.
         */
        @Override
        protected void engineSealChunks(byte[] baseNonce, long firstChunk, Object in, int inOffset, int count,
                Object out, int outOffset) {
            if (!(in instanceof byte[] inArray && out instanceof byte[] outArray)) {
                super.engineSealChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
                return;
            }
            try {
                for (int i = 0; i < count; i++) {
                    start(cipher, Cipher.ENCRYPT_MODE, nonceOfChunk(baseNonce, firstChunk + i), null);
                    cipher.doFinal(inArray, inOffset + i * CHUNK_SIZE, CHUNK_SIZE, outArray, outOffset + i * SEALED_CHUNK_SIZE);
                }
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(this + ": " + e.getMessage(), e);
            }
        }

        @Override
        protected int engineOpenChunks(byte[] baseNonce, long firstChunk, Object in, int inOffset, int count,
                Object out, int outOffset) {
            if (!(in instanceof byte[] inArray && out instanceof byte[] outArray)) {
                return super.engineOpenChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
            }
            for (int i = 0; i < count; i++) {
                start(cipher, Cipher.DECRYPT_MODE, nonceOfChunk(baseNonce, firstChunk + i), null);
                try {
                    cipher.doFinal(inArray, inOffset + i * SEALED_CHUNK_SIZE, SEALED_CHUNK_SIZE, outArray,
                            outOffset + i * CHUNK_SIZE);
                } catch (AEADBadTagException e) {
                    Arrays.fill(outArray, outOffset + i * CHUNK_SIZE, outOffset + (i + 1) * CHUNK_SIZE, (byte) 0);
                    return i;
                } catch (GeneralSecurityException e) {
                    Arrays.fill(outArray, outOffset + i * CHUNK_SIZE, outOffset + (i + 1) * CHUNK_SIZE, (byte) 0);
                    throw new IllegalStateException(this + ": " + e.getMessage(), e);
                }
            }
            return count;
        }

        @Override
        protected int engineSeal(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                int outOffset) {
            start(cipher, Cipher.ENCRYPT_MODE, nonce, aad);
            try {
                return transform(in, inOffset, length, out, outOffset);
            } catch (AEADBadTagException e) {
                throw new IllegalStateException("AES-GCM seal failed: " + e.getMessage(), e);
            }
        }

        @Override
        protected int engineOpen(byte[] nonce, byte[] aad, Object in, int inOffset, int length, Object out,
                int outOffset) throws AEADBadTagException {
            int dataLength = length - TAG_LENGTH;
            if (dataLength > slice) {
                return openInSlices(nonce, aad, in, inOffset, dataLength, out, outOffset);
            }
            start(cipher, Cipher.DECRYPT_MODE, nonce, aad);
            try {
                return transform(in, inOffset, length, out, outOffset);
            } catch (AEADBadTagException e) {
                wipe(out, outOffset, dataLength);
                throw new AEADBadTagException("AES-GCM authentication failed: " + e.getMessage());
            }
        }

        private int openInSlices(byte[] nonce, byte[] aad, Object in, int inOffset, int dataLength, Object out,
                int outOffset) throws AEADBadTagException {
            ByteBuffer src = view(in, inOffset, dataLength + TAG_LENGTH);
            src.get(dataLength, tag);
            src.limit(dataLength);
            ByteBuffer plain = view(out, outOffset, dataLength);
            try {
                // Pass 1: GCM's keystream is AES-CTR starting at nonce || 00000002.
                System.arraycopy(nonce, 0, counterBlock, 0, NONCE_LENGTH);
                counterBlock[12] = 0;
                counterBlock[13] = 0;
                counterBlock[14] = 0;
                counterBlock[15] = 2;
                ctr.init(Cipher.DECRYPT_MODE, key, new IvParameterSpec(counterBlock));
                ByteBuffer dst = plain.duplicate();
                while (src.hasRemaining()) {
                    src.limit(Math.min(src.position() + SLICE, dataLength));
                    ctr.update(src, dst);
                    src.limit(dataLength);
                }
                // Pass 2: sealing the plaintext again gives the tag the sender computed.
                if (scratch == null) {
                    scratch = ByteBuffer.allocate(SLICE + TAG_LENGTH);
                }
                if (Arrays.equals(nonce, lastVerifierNonce)) {
                    // SunJCE refuses to encrypt twice in a row with one nonce; step aside once.
                    byte[] other = nonce.clone();
                    other[0] ^= 1;
                    verifier.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_LENGTH * 8, other));
                }
                start(verifier, Cipher.ENCRYPT_MODE, nonce, aad);
                lastVerifierNonce = nonce.clone();
                ByteBuffer p = plain.duplicate();
                while (p.remaining() > SLICE) {
                    p.limit(p.position() + SLICE);
                    scratch.clear();
                    verifier.update(p, scratch);
                    p.limit(dataLength);
                }
                scratch.clear();
                int n = verifier.doFinal(p, scratch);
                boolean match = MessageDigest.isEqual(tag, Arrays.copyOfRange(scratch.array(), n - TAG_LENGTH, n));
                Arrays.fill(scratch.array(), (byte) 0);
                if (!match) {
                    wipe(out, outOffset, dataLength);
                    throw new AEADBadTagException("AES-GCM authentication failed: tag mismatch");
                }
                return dataLength;
            } catch (AEADBadTagException e) {
                throw e;
            } catch (GeneralSecurityException e) {
                wipe(out, outOffset, dataLength);
                throw new IllegalStateException(this + ": " + e.getMessage(), e);
            } catch (RuntimeException | Error e) { // an OutOfMemoryError too
                wipe(out, outOffset, dataLength); // pass 1 wrote plaintext that is not authenticated
                throw e;
            }
        }

        private int transform(Object in, int inOffset, int length, Object out, int outOffset)
                throws AEADBadTagException {
            try {
                if (in instanceof byte[] inArray && out instanceof byte[] outArray) {
                    int written = 0;
                    int done = 0;
                    while (length - done > slice) {
                        written += cipher.update(inArray, inOffset + done, slice, outArray, outOffset + written);
                        done += slice;
                    }
                    return written + cipher.doFinal(inArray, inOffset + done, length - done, outArray,
                            outOffset + written);
                }
                ByteBuffer src = view(in, inOffset, length);
                ByteBuffer dst = view(out, outOffset, out instanceof byte[] a ? a.length - outOffset
                        : ((ByteBuffer) out).limit() - outOffset);
                int written = 0;
                while (src.remaining() > slice) {
                    src.limit(src.position() + slice);
                    written += cipher.update(src, dst);
                    src.limit(length);
                }
                return written + cipher.doFinal(src, dst);
            } catch (AEADBadTagException e) {
                throw e;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(this + ": " + e.getMessage(), e);
            }
        }

        private static void wipe(Object out, int offset, int length) {
            if (out instanceof byte[] array) {
                Arrays.fill(array, offset, offset + length, (byte) 0);
            } else {
                ByteBuffer b = ((ByteBuffer) out).slice(offset, length);
                while (b.hasRemaining()) {
                    b.put((byte) 0);
                }
            }
        }

        @Override
        protected void engineClose() {
            key.destroy();
            // To encrypt: only an encryption makes GCM drop the key it kept from the last one.
            retire(cipher, ZERO_NONCE);
            if (verifier != null) {
                retire(verifier, ZERO_NONCE);
                retire(ctr, ZERO_COUNTER);
            }
            if (scratch != null) {
                Arrays.fill(scratch.array(), (byte) 0);
            }
        }
    }

    private static final class JceHmac extends BaseHmac {
        private final Mac mac;
        private final OwnKey key; // kept until close on a native provider, else null

        JceHmac(String engine, Mac mac, OwnKey key) {
            super("HMAC-SHA256 (" + engine + ")");
            this.mac = mac;
            this.key = key;
        }

        @Override
        protected void engineUpdate(Object in, int offset, int length) {
            if (in instanceof byte[] array) {
                mac.update(array, offset, length);
            } else {
                mac.update(view(in, offset, length));
            }
        }

        @Override
        protected void engineDoFinal(byte[] out, int offset) {
            try {
                mac.doFinal(out, offset);
            } catch (ShortBufferException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        protected void engineClose() {
            if (key != null) {
                key.destroy();
            }
            try {
                mac.init(ZERO_HMAC_KEY); // overwrites the padded key in place (SunJCE)
            } catch (GeneralSecurityException | RuntimeException e) {
                mac.reset(); // see retire(): a provider that refuses keeps its copy, and close() still succeeds
            }
        }
    }
}
