package io.sealpipe.hadoop;

import io.sealpipe.internal.hadoop.SealedKeys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;

/**
 * A key provider over a {@link Store} in memory, as a KMS client over its server: each instance
 * answers from the store, handing out fresh copies of the material (as Hadoop's keystore and KMS
 * providers do) and the same {@code KeyVersion} object for a version asked twice of one
 * instance. The store counts the providers made and the calls, records every material array
 * handed out, and can make the next read of the versions wait on a latch.
 */
final class FakeKeyProvider extends KeyProvider {
    /** The versions of one key, shared by every provider made over it. */
    static final class Store {
        final String name;
        private final List<byte[]> materials = new ArrayList<>(); // guarded by this; version i is NAME@i
        /** Providers made: each read of SealedKeys makes one (and its load one more). */
        final AtomicInteger made = new AtomicInteger();
        /** Calls of {@code getKeyVersions}: one per read of the versions. */
        final AtomicInteger versionReads = new AtomicInteger();
        /** Every material array handed out, in order. */
        final List<byte[]> handedOut = Collections.synchronizedList(new ArrayList<>());
        /** As Hadoop's {@code user:///}: transient, and handing out the store's own arrays. */
        volatile boolean transientStore;
        /** Hand out the store's own arrays (a provider that caches them) while saying it is not transient. */
        volatile boolean sharesArrays;
        /** {@code getCurrentKey} fails, as a KMS that goes down between two calls. */
        volatile boolean currentKeyFails;
        private CountDownLatch entered; // guarded by this; armed by blockNextRead
        private CountDownLatch release; // guarded by this

        Store(String name, byte[]... materials) {
            this.name = name;
            for (byte[] material : materials) {
                roll(material);
            }
        }

        /** Adds a version with a copy of {@code material}, the current one from now on. */
        synchronized void roll(byte[] material) {
            materials.add(material.clone());
        }

        /** The store's own array of version {@code i}. */
        synchronized byte[] material(int i) {
            return materials.get(i);
        }

        /** Makes providers over this store, counting them. */
        SealedKeys.Providers providers() {
            return () -> {
                made.incrementAndGet();
                return new FakeKeyProvider(this);
            };
        }

        /**
         * The next {@code getKeyVersions} counts {@code entered} down, then waits for
         * {@code release}: its caller is then inside the provider call.
         */
        synchronized void blockNextRead(CountDownLatch entered, CountDownLatch release) {
            this.entered = entered;
            this.release = release;
        }

        private void maybeBlock() throws IOException {
            CountDownLatch in;
            CountDownLatch out;
            synchronized (this) {
                in = entered;
                out = release;
                entered = null;
                release = null;
            }
            if (in != null) {
                in.countDown();
                try {
                    out.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("interrupted in the fake provider's read");
                }
            }
        }

        private synchronized int versions() {
            return materials.size();
        }
    }

    /** KeyVersion's constructor is protected. */
    private static final class Version extends KeyVersion {
        Version(String name, String versionName, byte[] material) {
            super(name, versionName, material);
        }
    }

    /** Metadata's constructor is protected. */
    private static final class Meta extends Metadata {
        Meta(int versions) {
            super("AES/CTR/NoPadding", 256, null, null, new Date(0), versions);
        }
    }

    private final Store store;
    private final Map<String, KeyVersion> handed = new HashMap<>(); // guarded by this; by version name

    private FakeKeyProvider(Store store) {
        super(new Configuration(false));
        this.store = store;
    }

    @Override
    public boolean isTransient() {
        return store.transientStore;
    }

    private synchronized KeyVersion version(int i) {
        String versionName = store.name + "@" + i;
        return handed.computeIfAbsent(versionName, v -> {
            byte[] own = store.material(i);
            byte[] material = store.transientStore || store.sharesArrays ? own : own.clone();
            store.handedOut.add(material);
            return new Version(store.name, v, material);
        });
    }

    @Override
    public List<KeyVersion> getKeyVersions(String name) throws IOException {
        store.versionReads.incrementAndGet();
        store.maybeBlock();
        List<KeyVersion> all = new ArrayList<>();
        if (store.name.equals(name)) {
            for (int i = 0; i < store.versions(); i++) {
                all.add(version(i));
            }
        }
        return all;
    }

    @Override
    public KeyVersion getCurrentKey(String name) throws IOException {
        if (store.currentKeyFails) {
            throw new IOException("connection refused (the fake KMS is down)");
        }
        int versions = store.versions();
        return store.name.equals(name) && versions > 0 ? version(versions - 1) : null;
    }

    @Override
    public KeyVersion getKeyVersion(String versionName) throws IOException {
        for (int i = 0; i < store.versions(); i++) {
            if ((store.name + "@" + i).equals(versionName)) {
                return version(i);
            }
        }
        return null;
    }

    @Override
    public Metadata getMetadata(String name) {
        int versions = store.versions();
        return store.name.equals(name) && versions > 0 ? new Meta(versions) : null;
    }

    @Override
    public List<String> getKeys() {
        return List.of(store.name);
    }

    @Override
    public KeyVersion createKey(String name, byte[] material, Options options) {
        throw new UnsupportedOperationException("the fake provider is changed through its store");
    }

    @Override
    public void deleteKey(String name) {
        throw new UnsupportedOperationException("the fake provider is changed through its store");
    }

    @Override
    public KeyVersion rollNewVersion(String name, byte[] material) {
        throw new UnsupportedOperationException("the fake provider is changed through its store");
    }

    @Override
    public void flush() {
    }
}
