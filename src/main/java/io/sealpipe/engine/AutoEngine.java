package io.sealpipe.engine;

import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * The engine of {@link Engines#auto()} when operations run on different engines, or when one
 * of them starts slowly: each operation goes to the engine chosen for it
 * ({@link EngineReport#operations()}). While a slow starter warms up ({@link Warmup}), another
 * engine runs the operation; the ciphers made here move to the chosen engine at their next call
 * once it is ready, at the same point of the data (an AES-CTR cipher carries its counter over).
 */
final class AutoEngine implements CryptoEngine {

    /**
     * Where one operation runs.
     *
     * @param engine the chosen engine
     * @param until the engine of the first calls while {@code warmup} runs, or null
     * @param warmup the warm-up of {@code engine} (started at first use), or null
     */
    record Route(CryptoEngine engine, CryptoEngine until, Warmup warmup) {
        /** Whether calls should go to {@code engine} now; starts the warm-up at first use. */
        boolean onEngine() {
            boolean ready = warmup == null || warmup.readyOrStart();
            return ready || until == null;
        }

        /** Whether {@link #onEngine()} will not change any more. */
        boolean settled() {
            return warmup == null || until == null || warmup.done();
        }

        CryptoEngine now() {
            return onEngine() ? engine : until;
        }
    }

    private final Map<Operation, Route> routes;

    AutoEngine(Map<Operation, Route> routes) {
        this.routes = new EnumMap<>(routes);
    }

    @Override
    public EngineKind kind() {
        return kindFor(Operation.GCM_SEAL);
    }

    @Override
    public EngineKind kindFor(Operation op) {
        return routes.get(op).engine().kind();
    }

    @Override
    public String name() {
        long engines = routes.values().stream().map(r -> r.engine().kind()).distinct().count();
        return engines == 1 ? kind().id() : "auto";
    }

    @Override
    public StreamCipher newAesCtr(byte[] key, byte[] iv) throws GeneralSecurityException {
        Route r = routes.get(Operation.CTR);
        return r.onEngine() ? r.engine().newAesCtr(key, iv) : new SwitchingCtr(r, key, iv);
    }

    @Override
    public StreamCipher newAesCfb(byte[] key, byte[] iv, boolean encrypt) throws GeneralSecurityException {
        return routes.get(Operation.CFB).now().newAesCfb(key, iv, encrypt);
    }

    @Override
    public AeadCipher newAesGcm(byte[] key) throws GeneralSecurityException {
        Route seal = routes.get(Operation.GCM_SEAL);
        Route open = routes.get(Operation.GCM_OPEN);
        if (seal.engine() == open.engine() && seal.until() == null && open.until() == null) {
            seal.onEngine(); // starts a warm-up of a forced jce
            open.onEngine();
            return seal.engine().newAesGcm(key);
        }
        return new SwitchingGcm(seal, open, key);
    }

    /** An HMAC cannot change engines halfway through a message: it is made on the engine ready now. */
    @Override
    public Hmac newHmacSha256(byte[] key) throws GeneralSecurityException {
        return routes.get(Operation.HMAC_SHA256).now().newHmacSha256(key);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("auto(");
        routes.forEach((op, r) -> b.append(op.id()).append('=').append(r.engine().name()).append(", "));
        return b.substring(0, b.length() - 2) + ")";
    }

    /**
     * AES-CTR on the bridge until the chosen engine is ready, then on the chosen engine from the
     * same stream position: counter block IV + position / 16, and position % 16 keystream bytes
     * skipped. Keeps a copy of the key until then (wiped at the switch or at close).
     */
    static final class SwitchingCtr implements StreamCipher {
        private final Route route;
        private final byte[] iv;
        private byte[] key;
        private long position;
        private volatile StreamCipher current;
        private boolean closed;

        SwitchingCtr(Route route, byte[] key, byte[] iv) throws GeneralSecurityException {
            this.route = route;
            this.current = route.until().newAesCtr(key, iv); // checks the key and the IV
            this.key = key.clone();
            this.iv = iv.clone();
        }

        @Override
        public void reset(byte[] iv) {
            current.reset(iv);
            System.arraycopy(iv, 0, this.iv, 0, 16);
            position = 0;
        }

        @Override
        public int update(byte[] in, int inOffset, int length, byte[] out, int outOffset) {
            int n = cipher().update(in, inOffset, length, out, outOffset);
            position += n;
            return n;
        }

        @Override
        public int update(java.nio.ByteBuffer in, java.nio.ByteBuffer out) {
            int n = cipher().update(in, out);
            position += n;
            return n;
        }

        private StreamCipher cipher() {
            if (key != null && route.onEngine()) {
                switchEngine();
            }
            return current;
        }

        private synchronized void switchEngine() {
            if (closed || key == null) {
                return;
            }
            byte[] counter = new byte[16];
            io.sealpipe.internal.CtrMath.counterBlock(iv, position >>> 4, counter);
            StreamCipher next;
            try {
                next = route.engine().newAesCtr(key, counter);
                int skip = (int) (position & 15);
                if (skip > 0) {
                    byte[] scratch = new byte[skip];
                    next.update(scratch, 0, skip, scratch, 0);
                }
            } catch (GeneralSecurityException | RuntimeException e) {
                return; // stays on the bridge; the next call tries again
            }
            StreamCipher old = current;
            current = next;
            old.close();
            Arrays.fill(key, (byte) 0);
            key = null;
        }

        @Override
        public synchronized void close() {
            closed = true;
            current.close();
            if (key != null) {
                Arrays.fill(key, (byte) 0);
                key = null;
            }
        }
    }

    /**
     * AES-GCM whose seals and opens each go to their operation's engine, the bridge's cipher
     * until that engine is ready. Every seal and open is a message of its own, so a call can go
     * to either engine. Keeps a copy of the key until both operations run on their engines.
     */
    static final class SwitchingGcm implements AeadCipher {
        private final Route seal;
        private final Route open;
        private final Map<EngineKind, AeadCipher> ciphers = new EnumMap<>(EngineKind.class);
        private byte[] key;
        private boolean closed;
        // Like every cipher, used by one thread at a time: plain fields, settled once on their engine.
        private AeadCipher sealing;
        private AeadCipher opening;
        private boolean sealingSettled;
        private boolean openingSettled;

        SwitchingGcm(Route seal, Route open, byte[] key) throws GeneralSecurityException {
            this.seal = seal;
            this.open = open;
            this.key = key.clone();
            cipher(seal.onEngine() ? seal.engine() : seal.until()); // checks the key
        }

        private synchronized AeadCipher cipher(CryptoEngine engine) throws GeneralSecurityException {
            if (closed) {
                throw new IllegalStateException("AES-GCM cipher (auto) is closed");
            }
            AeadCipher c = ciphers.get(engine.kind());
            if (c == null) {
                c = engine.newAesGcm(Objects.requireNonNull(key, "key"));
                ciphers.put(engine.kind(), c);
            }
            if (key != null && !mayNeedAnother(seal) && !mayNeedAnother(open)) {
                Arrays.fill(key, (byte) 0);
                key = null;
            }
            return c;
        }

        /**
         * Whether a call of this route may still need a cipher not made yet: its engine's, unless
         * its warm-up failed; its bridge's, while the engine is not ready. (Seal and open warm up
         * separately: one may be on the chosen engine while the other still needs the bridge.)
         */
        private boolean mayNeedAnother(Route r) {
            boolean onEngine = r.onEngine();
            if (!ciphers.containsKey(r.engine().kind()) && (onEngine || !r.settled())) {
                return true;
            }
            return !onEngine && !ciphers.containsKey(r.until().kind());
        }

        private AeadCipher sealing() {
            if (!sealingSettled) {
                boolean onEngine = seal.onEngine();
                sealing = on(onEngine ? seal.engine() : seal.until());
                sealingSettled = onEngine || seal.settled();
            }
            return sealing;
        }

        private AeadCipher opening() {
            if (!openingSettled) {
                boolean onEngine = open.onEngine();
                opening = on(onEngine ? open.engine() : open.until());
                openingSettled = onEngine || open.settled();
            }
            return opening;
        }

        private AeadCipher on(CryptoEngine engine) {
            try {
                return cipher(engine);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot make AES-GCM on " + engine.name() + ": " + e.getMessage(), e);
            }
        }

        @Override
        public int seal(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset) {
            return sealing().seal(nonce, aad, in, inOffset, length, out, outOffset);
        }

        @Override
        public int seal(byte[] nonce, byte[] aad, java.nio.ByteBuffer in, java.nio.ByteBuffer out) {
            return sealing().seal(nonce, aad, in, out);
        }

        @Override
        public int open(byte[] nonce, byte[] aad, byte[] in, int inOffset, int length, byte[] out, int outOffset)
                throws javax.crypto.AEADBadTagException {
            return opening().open(nonce, aad, in, inOffset, length, out, outOffset);
        }

        @Override
        public int open(byte[] nonce, byte[] aad, java.nio.ByteBuffer in, java.nio.ByteBuffer out)
                throws javax.crypto.AEADBadTagException {
            return opening().open(nonce, aad, in, out);
        }

        @Override
        public void sealChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out,
                int outOffset) {
            sealing().sealChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
        }

        @Override
        public int openChunks(byte[] baseNonce, long firstChunk, byte[] in, int inOffset, int count, byte[] out,
                int outOffset) {
            return opening().openChunks(baseNonce, firstChunk, in, inOffset, count, out, outOffset);
        }

        @Override
        public int openChunks(byte[] baseNonce, long firstChunk, java.nio.ByteBuffer in, java.nio.ByteBuffer out) {
            return opening().openChunks(baseNonce, firstChunk, in, out);
        }

        @Override
        public synchronized void close() {
            closed = true;
            ciphers.values().forEach(AeadCipher::close);
            if (key != null) {
                Arrays.fill(key, (byte) 0);
                key = null;
            }
        }

        @Override
        public String toString() {
            return "AES-GCM (auto: seal on " + seal.engine().name() + ", open on " + open.engine().name() + ")";
        }
    }
}
