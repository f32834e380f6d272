package io.sealpipe.hadoop;

import io.sealpipe.AesKey;
import io.sealpipe.GcmStreams;
import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProvider.KeyVersion;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.fs.Path;

/**
 * The versions of one key in a Hadoop {@link KeyProvider}: the current version writes, and a
 * reader takes the version whose key commitment matches the file's header.
 *
 * <p>The versions are read from the provider once (at the first file opened or created) and
 * kept: a keystore provider decrypts each entry with a slow password-based cipher, and a KMS
 * answers over the network, neither of which a file open should wait for. They are read again
 * when {@code sealpipe.fs.key.refresh.seconds} have passed (new files then use a version rolled
 * in the meantime; 0 reads them for every file written) and at once when a file's commitment
 * matches none of them (a file written under a newer version is readable at once).
 *
 * <p>A version is kept by its material (the SHA-256 of it), never by its name: a key deleted and
 * created again under the same name starts again at {@code NAME@0}, with other material. Each
 * read of the provider keeps exactly the versions it returned, so the first read after a deletion
 * forgets (and destroys) the deleted material, and a deleted key writes nothing more.
 *
 * <p>Key material is copied once into each version, which {@link #close()} or a read that no
 * longer lists it destroys. Callers get {@link GcmStreams} of their own, with their own copy of
 * the key, taken whole under this object's lock and destroyed by the caller once its stream is
 * made: a {@code close()} from another thread never leaves a writer with a zeroed key. It makes
 * a writer that comes later fail with an {@code IOException}; one that already had its streams
 * seals its file under the real key. Thread-safe.
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
            try {
                GcmStreams plain = GcmStreams.builder().key(key).parallelism(parallelism).build();
                GcmStreams snappy = GcmStreams.builder().key(key).engine(plain.engine()).context(SNAPPY_CONTEXT)
                        .parallelism(parallelism).build();
                return new Version(name, key, plain, snappy);
            } catch (RuntimeException e) {
                key.destroy();
                throw e;
            }
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

    /** The material a written file's key must have: Cobblestone-256. */
    private static final int WRITE_KEY_BYTES = 32;

    private final Configuration conf;
    private final String providerPath;
    private final String keyName;
    private final int parallelism;
    private final long refreshNanos;
    private KeyProvider provider;                                        // guarded by this
    private Map<String, Version> byMaterial = new LinkedHashMap<>();     // guarded by this; by SHA-256 of the material
    private Version current;                                             // guarded by this; null until read
    private long readAt;                                                 // guarded by this; System.nanoTime() of the last read
    private boolean providerRead;                                        // guarded by this; provider was asked (read a new one)
    private boolean closed;                                              // guarded by this

    private SealedKeys(Configuration conf, String providerPath, String keyName, int parallelism, long refreshNanos,
            KeyProvider provider) {
        this.conf = conf;
        this.providerPath = providerPath;
        this.keyName = keyName;
        this.parallelism = parallelism;
        this.refreshNanos = refreshNanos;
        this.provider = provider;
    }

    /**
     * The key named by {@code sealpipe.fs.key.name} in the provider at
     * {@code sealpipe.fs.key.provider.path}.
     *
     * @throws IOException if either is unset, the provider cannot be made or the key does not
     *     exist in it
     */
    static SealedKeys load(Configuration conf, int parallelism) throws IOException {
        String path = required(conf, SealedFileSystem.KEY_PROVIDER_PATH,
                "the URI of the Hadoop KeyProvider that holds the key, such as jceks://file/etc/sealpipe/keys.jceks or kms://http@kms:9600/kms");
        String name = required(conf, SealedFileSystem.KEY_NAME,
                "the name of the key in " + path + " (create one with: hadoop key create NAME -size 256 -provider " + path + ")");
        long refreshSeconds = conf.getLong(SealedFileSystem.KEY_REFRESH_SECONDS, SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS);
        if (refreshSeconds < 0) {
            throw new IllegalArgumentException(SealedFileSystem.KEY_REFRESH_SECONDS + " must be 0 or more, not " + refreshSeconds);
        }
        KeyProvider provider = newProvider(conf, path);
        SealedKeys keys = new SealedKeys(conf, path, name, parallelism,
                refreshSeconds > Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : refreshSeconds * 1_000_000_000L, provider);
        try {
            if (provider.getMetadata(name) == null) {
                throw new IOException("there is no key '" + name + "' in " + path + " (" + SealedFileSystem.KEY_NAME
                        + "): create it with: hadoop key create " + name + " -size 256 -provider " + path);
            }
        } catch (IOException | RuntimeException e) {
            keys.closeQuietly(e);
            throw e;
        }
        return keys;
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

    /**
     * Streams of the current version, for writing a plain or a compressed file: the caller's
     * own, to destroy once its stream is made.
     *
     * @throws IOException if this was closed, the provider has no current version (the key was
     *     deleted) or its material is not 256 bits
     */
    synchronized GcmStreams forWriting(boolean compressed) throws IOException {
        checkOpen();
        if (current == null || System.nanoTime() - readAt >= refreshNanos) { // 0: every time
            readVersions(false);
        }
        if (current.key().length() != WRITE_KEY_BYTES) {
            throw new IOException("version " + current.name() + " of the key '" + keyName + "' in " + providerPath
                    + " is 128 bits; sealed files are written with 256-bit keys (Cobblestone-256): roll it to a 256-bit"
                    + " version with: hadoop key roll " + keyName + " -provider " + providerPath
                    + " (after creating the key with -size 256)");
        }
        return current.streams(compressed);
    }

    /**
     * The version that wrote the file whose first {@link GcmStreams#HEADER_LENGTH} bytes are
     * {@code header}, as streams of the caller's own (to destroy once the file is open): tried
     * among the versions read, then once more after reading them again from a new provider (a
     * version rolled by another process since).
     *
     * @throws IOException if this was closed, or no version matches, naming {@code path}, the
     *     key and the versions tried
     */
    synchronized Match forReading(byte[] header, Path path) throws IOException {
        checkOpen();
        if (current == null) {
            readVersions(false);
        }
        Match found = match(header);
        if (found == null) {
            readVersions(true);
            found = match(header);
        }
        if (found == null) {
            List<String> tried = byMaterial.values().stream().map(Version::name).toList();
            throw new IOException(path + ": no version of the key '" + keyName + "' in " + providerPath
                    + " matches the file's key commitment (tried " + String.join(", ", tried) + "): the file was written"
                    + " under another key, or it is not a sealed file (the versions deleted from the provider are not"
                    + " tried). No byte of it was decrypted.");
        }
        return found;
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

    /**
     * Reads every version and the current one from the provider (from a new provider if
     * {@code reload}, or if the versions are stale: what another process rolled or deleted
     * since). Keeps exactly the versions read, by material; destroys the others, all of them if
     * the key is gone.
     */
    private void readVersions(boolean reload) throws IOException {
        if (reload || providerRead) {
            KeyProvider fresh = newProvider(conf, providerPath);
            KeyProvider old = provider;
            provider = fresh;
            old.close();
        }
        providerRead = true;
        // A provider that fails (a KMS outage) keeps the versions read before for reading; only
        // its answer that the key is gone forgets them.
        List<KeyVersion> versions = provider.getKeyVersions(keyName);
        KeyVersion now = provider.getCurrentKey(keyName);
        if (now == null || now.getMaterial() == null || versions == null) {
            forget();
            throw new IOException("the key '" + keyName + "' in " + providerPath + " has no current version: it was deleted"
                    + " (create it with: hadoop key create " + keyName + " -size 256 -provider " + providerPath
                    + "), or this user may not read its material");
        }
        byte[] material = now.getMaterial();
        if (material.length != 16 && material.length != WRITE_KEY_BYTES) {
            forget();
            throw new IOException("version " + now.getVersionName() + " of the key '" + keyName + "' in " + providerPath
                    + " is " + material.length * 8 + " bits, not an AES key: sealed files are written with 256-bit keys");
        }
        Map<String, Version> kept = byMaterial;
        Map<String, Version> read = new LinkedHashMap<>();
        try {
            for (KeyVersion version : versions) {
                keep(version, kept, read);
            }
            current = keep(now, kept, read);
        } catch (RuntimeException e) {
            read.values().forEach(Version::destroy);
            kept.values().forEach(Version::destroy);
            byMaterial = new LinkedHashMap<>();
            current = null;
            throw e;
        }
        kept.values().forEach(Version::destroy); // no longer in the provider: deleted
        byMaterial = read;
        readAt = System.nanoTime();
    }

    /**
     * Moves the version of {@code version}'s material from {@code kept} to {@code read}, or makes
     * it; returns it, or null if the material is no AES key (nothing it could have written).
     */
    private Version keep(KeyVersion version, Map<String, Version> kept, Map<String, Version> read) {
        byte[] material = version.getMaterial();
        if (material == null || (material.length != 16 && material.length != 32)) {
            return null;
        }
        String id = fingerprint(material);
        Version found = read.get(id);
        if (found == null) {
            found = kept.remove(id);
            found = found == null ? Version.of(version.getVersionName(), material, parallelism)
                    : new Version(version.getVersionName(), found.key(), found.plain(), found.snappy());
            read.put(id, found);
        }
        return found;
    }

    /** The SHA-256 of {@code material}, in hex: a version's identity, which does not reveal it. */
    private static String fingerprint(byte[] material) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(material));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e); // every JDK must have it
        }
    }

    /** Destroys every version kept: until the provider is read again, nothing writes or reads. */
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

    /** Destroys every version's copy of the key and closes the provider. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        forget();
        provider.close();
    }

    private void closeQuietly(Exception failure) {
        try {
            close();
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    @Override
    public String toString() {
        return "SealedKeys(" + keyName + " in " + providerPath + ")";
    }
}
