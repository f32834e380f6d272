package io.sealpipe.hadoop;

import io.sealpipe.AesKey;
import io.sealpipe.GcmStreams;
import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProvider.KeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.Path;

/**
 * The versions of one key in a Hadoop {@link KeyProvider}: the current version writes, and a
 * reader takes the version whose key commitment matches the file's header.
 *
 * <p>The versions read from the provider are kept: a keystore provider decrypts each entry with
 * a slow password-based cipher, and a KMS answers over the network, neither of which every file
 * should wait for. Once {@code sealpipe.fs.key.refresh.seconds} have passed since the last read,
 * the next file created or opened reads them again from a new provider (0: every file), and a
 * file whose commitment matches none of them makes this read them at once (a file written under
 * a newer version is readable at once). Callers that need a read at the same moment share one.
 *
 * <p>A version is kept by its material (the SHA-256 of it), never by its name: a key deleted and
 * created again under the same name starts again at {@code NAME@0}, with other material. Each
 * read keeps exactly the versions the provider returned, so the first read after a deletion
 * forgets (and destroys) the deleted material: no file created or opened after that read uses it
 * (streams already made keep their own copy until they are closed). A provider that fails (a KMS
 * outage) changes nothing kept: files stay readable with the versions read before, and
 * {@code create} uses the current version read before until the refresh period has passed, then
 * fails until a read succeeds.
 *
 * <p>Each version holds copies of its material ({@link AesKey} and the {@link GcmStreams} that
 * match headers against it), which {@link #close()}, or a read that no longer lists it, destroys.
 * Callers get {@code GcmStreams} of their own, made under this object's lock from a whole copy of
 * the key, and destroy them once their stream is made: a {@code close()} from another thread
 * never leaves a caller with a zeroed key. The provider is never called under the lock that
 * {@code close()} takes (Hadoop's shutdown hook closes file systems while it holds the
 * {@code FileSystem} cache's lock, which making a {@code jceks://} provider needs). Thread-safe.
 */
final class SealedKeys implements Closeable {
    /**
     * The context of compressed sealed files' messages (empty for the others): part of their
     * key derivation, so that the key commitment tells a reader, authenticated, which it has.
     */
    static final byte[] SNAPPY_CONTEXT = "sealpipe.fs.compress=snappy".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /**
     * One version's material, with the streams that match headers against it (empty context for
     * plain files, {@link #SNAPPY_CONTEXT} for compressed ones); {@code name} is the provider's
     * name for it at the last read.
     */
    private record Version(String name, AesKey key, GcmStreams plain, GcmStreams snappy) {
        static Version of(String name, byte[] material, int parallelism) {
            AesKey key = AesKey.copyOf(material);
            GcmStreams plain = null;
            try {
                plain = GcmStreams.builder().key(key).parallelism(parallelism).build();
                GcmStreams snappy = GcmStreams.builder().key(key).engine(plain.engine()).context(SNAPPY_CONTEXT)
                        .parallelism(parallelism).build();
                return new Version(name, key, plain, snappy);
            } catch (RuntimeException e) {
                key.destroy();
                if (plain != null) {
                    plain.destroy();
                }
                throw e;
            }
        }

        Version named(String newName) {
            return new Version(newName, key, plain, snappy);
        }

        /** Streams of the caller's own, with a copy of the key: the caller destroys them. */
        GcmStreams streams(boolean compressed) {
            GcmStreams like = compressed ? snappy : plain;
            return GcmStreams.builder().key(key).engine(like.engine()).context(compressed ? SNAPPY_CONTEXT : new byte[0])
                    .parallelism(like.parallelism()).build();
        }

        void destroy() {
            key.destroy();
            plain.destroy();
            snappy.destroy();
        }

        @Override
        public String toString() {
            return "Version(" + name + ")";
        }
    }

    /**
     * The streams that wrote a file, the caller's own (destroy them once the file is open), and
     * whether its content is compressed.
     */
    record Match(GcmStreams streams, boolean compressed) {}

    /** A file that no version of the key wrote: another key's, or no sealed file. */
    static final class NoVersionMatches extends IOException {
        private static final long serialVersionUID = 1L;

        NoVersionMatches(String message) {
            super(message);
        }
    }

    /** The material a written file's key must have: Cobblestone-256. */
    private static final int WRITE_KEY_BYTES = 32;

    /**
     * Makes a new provider for each read: a keystore provider is a snapshot of its file, and a KMS
     * client is closed after each read.
     */
    @FunctionalInterface
    interface Providers {
        KeyProvider open() throws IOException;
    }

    private final Providers providers;
    private final LongSupplier nanoTime; // System.nanoTime, or a test's clock
    private final String providerPath;
    private final String keyName;
    private final int parallelism;
    private final long refreshNanos;
    /** One read of the provider at a time; never taken by {@link #close()}, never under this. */
    private final ReentrantLock reading = new ReentrantLock();
    private Map<String, Version> byMaterial = new LinkedHashMap<>(); // guarded by this; by SHA-256 of the material
    private Version current;         // guarded by this; null until read, or if the current version cannot write
    private String cannotWrite;      // guarded by this; why current is null after a read
    private boolean read;            // guarded by this; whether the provider was read once
    private long reads;              // guarded by this; reads of the provider finished, failed ones too
    private Exception lastFailure;   // guarded by this; why the last read failed, null if it succeeded
    private long readAt;             // guarded by this; nanoTime of the last read
    private volatile boolean closed; // set under this

    private SealedKeys(Providers providers, LongSupplier nanoTime, String providerPath, String keyName, int parallelism,
            long refreshNanos) {
        this.providers = providers;
        this.nanoTime = nanoTime;
        this.providerPath = providerPath;
        this.keyName = keyName;
        this.parallelism = parallelism;
        this.refreshNanos = refreshNanos;
    }

    /**
     * The key named by {@code sealpipe.fs.key.name} in the provider at
     * {@code sealpipe.fs.key.provider.path}, checked to exist now; its versions are read at the
     * first file created or opened.
     *
     * @throws IOException if either is unset, the provider cannot be made or the key does not
     *     exist in it
     */
    static SealedKeys load(Configuration conf, int parallelism) throws IOException {
        String path = conf.getTrimmed(SealedFileSystem.KEY_PROVIDER_PATH);
        return load(conf, parallelism, () -> newProvider(conf, path), System::nanoTime);
    }

    /**
     * {@link #load(Configuration, int)} with the providers made by {@code providers} and the time
     * told by {@code nanoTime} (as {@link System#nanoTime()}): for tests.
     */
    static SealedKeys load(Configuration conf, int parallelism, Providers providers, LongSupplier nanoTime)
            throws IOException {
        String path = required(conf, SealedFileSystem.KEY_PROVIDER_PATH,
                "the URI of the Hadoop KeyProvider that holds the key, such as jceks://file/etc/sealpipe/keys.jceks or kms://http@kms:9600/kms");
        String name = required(conf, SealedFileSystem.KEY_NAME,
                "the name of the key in " + path + " (create one with: hadoop key create NAME -size 256 -provider " + path + ")");
        long refreshSeconds = conf.getLong(SealedFileSystem.KEY_REFRESH_SECONDS, SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS);
        if (refreshSeconds < 0) {
            throw new IllegalArgumentException(SealedFileSystem.KEY_REFRESH_SECONDS + " must be 0 or more, not " + refreshSeconds);
        }
        KeyProvider provider = providers.open();
        try {
            KeyProvider.Metadata metadata;
            try {
                metadata = provider.getMetadata(name);
            } catch (IOException e) {
                throw unreadable(name, path, e);
            }
            if (metadata == null) {
                throw new IOException("there is no key '" + name + "' in " + path + " (" + SealedFileSystem.KEY_NAME
                        + "): create it with: hadoop key create " + name + " -size 256 -provider " + path);
            }
        } finally {
            provider.close(); // a keystore provider is a snapshot of the file: each read makes a new one
        }
        return new SealedKeys(providers, nanoTime, path, name, parallelism,
                refreshSeconds > Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : refreshSeconds * 1_000_000_000L);
    }

    /**
     * A provider's failure (a KMS that is down, refuses the caller, or times out) as a message
     * that names the key and the provider, which a KMS client's own messages do not.
     */
    private static IOException unreadable(String name, String path, IOException e) {
        return new IOException("cannot read the key '" + name + "' from " + path + " (" + SealedFileSystem.KEY_PROVIDER_PATH
                + "): " + e + "; check that the provider is reachable and lets this user read the key", e);
    }

    private static String required(Configuration conf, String key, String what) throws IOException {
        String value = conf.getTrimmed(key);
        if (value == null || value.isEmpty()) {
            throw new IOException(key + " is not set: set it to " + what);
        }
        return value;
    }

    private static KeyProvider newProvider(Configuration conf, String path) throws IOException {
        URI uri;
        try {
            uri = new URI(path);
        } catch (URISyntaxException e) {
            throw new IOException(SealedFileSystem.KEY_PROVIDER_PATH + " is not a URI: " + e.getMessage(), e);
        }
        KeyProvider provider = KeyProviderFactory.get(uri, conf);
        if (provider == null) {
            throw new IOException(SealedFileSystem.KEY_PROVIDER_PATH + "=" + path + " names no KeyProvider that Hadoop knows"
                    + " (its schemes: jceks, localjceks, kms, user; jceks://file/PATH for a keystore file)");
        }
        return provider;
    }

    /** The name of the key these are versions of. */
    String keyName() {
        return keyName;
    }

    /** Whether {@link #close()} was called: the file system is closed and its keys are gone. */
    boolean isClosed() {
        return closed;
    }

    /**
     * Streams of the current version, for writing a plain or a compressed file: the caller's
     * own, to destroy once its stream is made.
     *
     * @throws IOException if this was closed, the provider cannot be read, has no current version
     *     (the key was deleted) or its material is not 256 bits
     */
    GcmStreams forWriting(boolean compressed) throws IOException {
        long seen;
        synchronized (this) {
            checkOpen();
            if (current != null && !stale()) {
                return current.streams(compressed);
            }
            seen = reads;
        }
        readVersions(seen);
        synchronized (this) {
            checkOpen();
            if (lastFailure != null) { // the read this call shared failed: nothing newer is known
                throw new IOException(lastFailure.getMessage(), lastFailure);
            }
            if (current == null) {
                throw new IOException(cannotWrite);
            }
            return current.streams(compressed);
        }
    }

    /**
     * The version that wrote the file whose first {@link GcmStreams#HEADER_LENGTH} bytes are
     * {@code header}, as streams of the caller's own (to destroy once the file is open): tried
     * among the versions kept, unless they are stale, then after reading them again from the
     * provider (a version rolled by another process since). If that read fails, the versions
     * read before are tried; if the provider says the key is gone, none is.
     *
     * @throws IOException naming {@code path} if this was closed, or no version matches (then
     *     naming the key and the versions tried, or why the provider could not be read)
     */
    Match forReading(byte[] header, Path path) throws IOException {
        long seen;
        synchronized (this) {
            checkOpen();
            if (read && !stale()) {
                Match found = match(header);
                if (found != null) {
                    return found;
                }
            }
            seen = reads;
        }
        IOException unread = null;
        try {
            readVersions(seen);
        } catch (IOException e) {
            unread = e; // a KMS outage leaves the versions read before; a deleted key, none
        }
        synchronized (this) {
            checkOpen();
            Match found = match(header);
            if (found != null) {
                return found;
            }
            Exception failed = unread != null ? unread : lastFailure; // this call's read, or the one it shared
            if (failed != null) {
                throw new IOException(path + ": " + failed.getMessage(), failed);
            }
            List<String> tried = byMaterial.values().stream().map(Version::name).toList();
            throw new NoVersionMatches(path + ": no version of the key '" + keyName + "' in " + providerPath
                    + " matches the file's key commitment (tried " + String.join(", ", tried) + "): the file was"
                    + " written under another key, or it is not a sealed file (a version deleted from the provider is"
                    + " not tried). No byte of it was decrypted.");
        }
    }

    private boolean stale() {
        return nanoTime.getAsLong() - readAt >= refreshNanos; // 0: always
    }

    private Match match(byte[] header) {
        for (Version version : byMaterial.values()) {
            if (version.plain().matchesHeader(header)) {
                return new Match(version.streams(false), false);
            }
            if (version.snappy().matchesHeader(header)) {
                return new Match(version.streams(true), true);
            }
        }
        return null;
    }

    /** What one read of the provider returned: every version, and the current one (null: none). */
    private record ProviderVersions(List<KeyVersion> all, KeyVersion current) {}

    /**
     * Reads every version and the current one from a new provider (what another process rolled
     * or deleted since), outside this object's lock, then keeps exactly the versions read, by
     * material, and destroys the others: all of them if the key is gone. A provider that fails
     * changes nothing. Does nothing if a read finished since the caller saw {@code seen} reads
     * (it waited for that read, which began after the caller asked): callers that arrive
     * together share one read.
     *
     * @throws IOException if the provider cannot be read, or says the key is gone (the callers
     *     that shared the read find why in {@code lastFailure})
     */
    private void readVersions(long seen) throws IOException {
        reading.lock();
        try {
            synchronized (this) {
                checkOpen();
                if (reads != seen) {
                    return;
                }
            }
            ProviderVersions found;
            try {
                found = readProvider();
            } catch (IOException | RuntimeException e) {
                synchronized (this) {
                    reads++;
                    lastFailure = e;
                }
                throw e;
            }
            synchronized (this) {
                checkOpen();
                reads++;
                try {
                    keep(found);
                    lastFailure = null;
                } catch (IOException | RuntimeException e) {
                    lastFailure = e;
                    throw e;
                }
            }
        } finally {
            reading.unlock();
        }
    }

    /** One read of a new provider, closed after it (its failure to close changes nothing read). */
    private ProviderVersions readProvider() throws IOException {
        KeyProvider provider = providers.open();
        ProviderVersions found;
        try {
            found = new ProviderVersions(provider.getKeyVersions(keyName), provider.getCurrentKey(keyName));
        } catch (IOException e) {
            IOException failure = unreadable(keyName, providerPath, e);
            try {
                provider.close();
            } catch (IOException | RuntimeException closing) {
                failure.addSuppressed(closing);
            }
            throw failure;
        } catch (RuntimeException e) {
            try {
                provider.close();
            } catch (IOException | RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        try {
            provider.close();
        } catch (IOException | RuntimeException closing) {
            // What was read stands; a KMS client's queue that fails to stop has nothing of ours.
        }
        return found;
    }

    /** Replaces the versions kept with {@code found}'s, reusing those of the same material. */
    private void keep(ProviderVersions found) throws IOException {
        read = true;
        readAt = nanoTime.getAsLong();
        KeyVersion now = found.current();
        if (now == null || now.getMaterial() == null || found.all() == null) {
            forget();
            cannotWrite = "the key '" + keyName + "' in " + providerPath + " has no current version: it was deleted"
                    + " (create it with: hadoop key create " + keyName + " -size 256 -provider " + providerPath
                    + "), or this user may not read its material";
            throw new IOException(cannotWrite);
        }
        Map<String, Version> kept = byMaterial;
        Map<String, Version> fresh = new LinkedHashMap<>();
        try {
            for (KeyVersion version : found.all()) {
                keep(version, kept, fresh);
            }
            current = keep(now, kept, fresh);
        } catch (RuntimeException e) { // a version's streams could not be made: keep nothing
            fresh.values().forEach(Version::destroy);
            forget();
            cannotWrite = "the versions of the key '" + keyName + "' could not be kept: " + e;
            throw e;
        }
        kept.values().forEach(Version::destroy); // no longer in the provider: deleted
        byMaterial = fresh;
        int bytes = now.getMaterial().length;
        if (current == null || bytes != WRITE_KEY_BYTES) {
            current = null;
            cannotWrite = "version " + now.getVersionName() + " of the key '" + keyName + "' in " + providerPath + " is "
                    + bytes * 8 + " bits; sealed files are written with 256-bit keys (Cobblestone-256): roll it to a"
                    + " 256-bit version with: hadoop key roll " + keyName + " -provider " + providerPath
                    + " (after creating the key with -size 256)";
        }
    }

    /**
     * Moves the version of {@code version}'s material from {@code kept} to {@code fresh}, or makes
     * it; returns it, or null if the material is no 128- or 256-bit key (nothing it could have
     * written).
     */
    private Version keep(KeyVersion version, Map<String, Version> kept, Map<String, Version> fresh) {
        byte[] material = version.getMaterial();
        if (material == null || (material.length != 16 && material.length != 32)) {
            return null;
        }
        String id = fingerprint(material);
        Version found = fresh.get(id);
        if (found == null) {
            Version before = kept.remove(id);
            found = before == null ? Version.of(version.getVersionName(), material, parallelism)
                    : before.named(version.getVersionName());
            fresh.put(id, found);
        }
        return found;
    }

    /** The SHA-256 of {@code material}, in hex: a version's identity, which does not reveal it. */
    private static String fingerprint(byte[] material) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(material));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e); // every JDK must have it
        }
    }

    /** Destroys every version kept; nothing writes or reads until the provider is read again. */
    private void forget() {
        byMaterial.values().forEach(Version::destroy);
        byMaterial = new LinkedHashMap<>();
        current = null;
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("the sealed file system was closed: its keys are gone");
        }
    }

    /**
     * Destroys every version's copies of the key. Waits for no provider call: a read of the
     * provider running meanwhile finds this closed and keeps nothing.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        forget();
    }

    @Override
    public String toString() {
        return "SealedKeys(" + keyName + " in " + providerPath + ")";
    }
}
