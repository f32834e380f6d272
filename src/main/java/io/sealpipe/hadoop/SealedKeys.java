package io.sealpipe.hadoop;

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
 * The versions of one key in a Hadoop {@link KeyProvider}, each as the {@link GcmStreams} of
 * its material (empty context): the current version writes, and a reader takes the version
 * whose key commitment matches the file's header.
 *
 * <p>The versions are read from the provider once (at the first file opened or created) and
 * kept: a keystore provider decrypts each entry with a slow password-based cipher, and a KMS
 * answers over the network, neither of which a file open should wait for. They are read again
 * when {@code sealpipe.fs.key.refresh.seconds} have passed (new files then use a version rolled
 * in the meantime) and at once when a file's commitment matches none of them (a file written
 * under a newer version is readable at once). Key material is copied once into each version's
 * {@code GcmStreams}, which {@link #close()} destroys. Thread-safe.
 */
final class SealedKeys implements Closeable {
    /**
     * The context of compressed sealed files' messages (empty for the others): part of their
     * key derivation, so that the key commitment tells a reader, authenticated, which it has.
     */
    static final byte[] SNAPPY_CONTEXT = "sealpipe.fs.compress=snappy".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** One key version's streams: for plain files (empty context) and for compressed ones. */
    private record Version(GcmStreams plain, GcmStreams snappy) {
        void destroy() {
            plain.destroy();
            snappy.destroy();
        }
    }

    /** The streams that wrote a file, and whether its content is compressed. */
    record Match(GcmStreams streams, boolean compressed) {}

    /** The material a written file's key must have: Cobblestone-256. */
    private static final int WRITE_KEY_BYTES = 32;

    private final Configuration conf;
    private final String providerPath;
    private final String keyName;
    private final int parallelism;
    private final long refreshNanos;
    private KeyProvider provider;                                // guarded by this
    private final Map<String, Version> byVersion = new LinkedHashMap<>(); // guarded by this; newest last
    private String current;                                      // guarded by this; null until read
    private long readAt;                                         // guarded by this; System.nanoTime() of the last read
    private boolean closed;                                      // guarded by this

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
     * The current version, for writing a plain or a compressed file.
     *
     * @throws IOException if the provider has no current version or its material is not 256
     *     bits
     */
    synchronized GcmStreams forWriting(boolean compressed) throws IOException {
        checkOpen();
        if (current == null || System.nanoTime() - readAt >= refreshNanos) { // 0: every time
            readVersions(false);
        }
        Version version = byVersion.get(current);
        GcmStreams streams = compressed ? version.snappy() : version.plain();
        if (streams.formatName().equals("Cobblestone-128")) {
            throw new IOException("version " + current + " of the key '" + keyName + "' in " + providerPath
                    + " is 128 bits; sealed files are written with 256-bit keys (Cobblestone-256): roll it to a 256-bit"
                    + " version with: hadoop key roll " + keyName + " -provider " + providerPath
                    + " (after creating the key with -size 256)");
        }
        return streams;
    }

    /**
     * The version that wrote the file whose first {@link GcmStreams#HEADER_LENGTH} bytes are
     * {@code header}: tried among the versions read, then once more after reading them again
     * from a new provider (a version rolled by another process since).
     *
     * @throws IOException if no version matches, naming {@code path}, the key and the versions
     *     tried
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
            throw new IOException(path + ": no version of the key '" + keyName + "' in " + providerPath
                    + " matches the file's key commitment (tried " + String.join(", ", byVersion.keySet())
                    + "): the file was written under another key, or it is not a sealed file. No byte of it was decrypted.");
        }
        return found;
    }

    private Match match(byte[] header) {
        for (Version version : byVersion.values()) {
            if (version.plain().matchesHeader(header)) {
                return new Match(version.plain(), false);
            }
            if (version.snappy().matchesHeader(header)) {
                return new Match(version.snappy(), true);
            }
        }
        return null;
    }

    /**
     * Reads every version and the current one from the provider (from a new provider if
     * {@code reload}, or if the versions are stale: what another process rolled since).
     */
    private void readVersions(boolean reload) throws IOException {
        if (reload || current != null) {
            KeyProvider fresh = newProvider(conf, providerPath);
            KeyProvider old = provider;
            provider = fresh;
            old.close();
        }
        List<KeyVersion> versions = provider.getKeyVersions(keyName);
        KeyVersion now = provider.getCurrentKey(keyName);
        if (now == null || now.getMaterial() == null || versions == null) {
            throw new IOException("the key '" + keyName + "' in " + providerPath + " has no current version"
                    + " (or this user may not read its material)");
        }
        for (KeyVersion version : versions) {
            byte[] material = version.getMaterial();
            if (material != null && (material.length == 16 || material.length == 32)) { // else nothing it could have written
                byVersion.computeIfAbsent(version.getVersionName(), name -> streams(material));
            }
        }
        byte[] material = now.getMaterial();
        if (material.length != 16 && material.length != WRITE_KEY_BYTES) {
            throw new IOException("version " + now.getVersionName() + " of the key '" + keyName + "' in " + providerPath
                    + " is " + material.length * 8 + " bits, not an AES key: sealed files are written with 256-bit keys");
        }
        byVersion.computeIfAbsent(now.getVersionName(), name -> streams(material));
        current = now.getVersionName();
        readAt = System.nanoTime();
    }

    private Version streams(byte[] material) {
        return new Version(GcmStreams.builder().key(material).parallelism(parallelism).build(),
                GcmStreams.builder().key(material).context(SNAPPY_CONTEXT).parallelism(parallelism).build());
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
        byVersion.values().forEach(Version::destroy);
        byVersion.clear();
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
