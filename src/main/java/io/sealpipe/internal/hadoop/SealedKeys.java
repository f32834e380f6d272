package io.sealpipe.internal.hadoop;

import io.sealpipe.AesKey;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.hadoop.KmsGeneration;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
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
 * the next file created or opened reads them again from a new provider (0: every file). A file
 * whose commitment matches none of them makes this read them again, so that a file written under
 * a version rolled since is readable at once; but at most once per
 * {@code sealpipe.fs.key.miss.refresh.seconds} (default 5): with compression on, a listing opens
 * every file, and a directory of another key's files would otherwise cost a provider made and
 * read (a keystore decryption, a KMS call) per file. Within that interval such a file fails as
 * matching no version without asking the provider: a version rolled within the interval after
 * such a read is found once it has passed.
 *
 * <p>No lock is held while the provider is called. One caller reads; the callers that need a
 * read meanwhile (a writer once the versions are stale, a file that no version kept matches)
 * wait for that read and share it; the others are served by the versions kept, stale or not,
 * and wait for nothing (a file opened during a read may use a version that read then finds
 * deleted, as one opened just before it would).
 *
 * <p>A version is kept by its material (the SHA-256 of it), never by its name: a key deleted and
 * created again under the same name starts again at {@code NAME@0}, with other material. Each
 * read keeps exactly the versions the provider returned, so the first read after a deletion
 * forgets (and destroys) the deleted material: no file created or opened after that read uses it
 * (streams already made keep their own copy until they are closed). A provider that fails (a KMS
 * outage) changes nothing kept: files stay readable with the versions read before, and
 * {@code create} uses the current version read before until the refresh period has passed, then
 * fails until a read succeeds. After a failed read the provider is tried again only once
 * {@code sealpipe.fs.key.miss.refresh.seconds} have passed (each try may wait for a KMS client's
 * timeout); until then callers get that read's failure at once, or the versions kept.
 *
 * <p>The material arrays a provider hands out ({@link KeyVersion#getMaterial()}, copies made for
 * the read by Hadoop's keystore and KMS providers) are zeroed once each version is copied, and
 * when the read fails. A transient provider's are left alone ({@link KeyProvider#isTransient()}:
 * Hadoop's {@code user:///} hands out the arrays of the user's credentials themselves, which the
 * JVM goes on using). Material of zero bytes only is never kept: it is no key, but what a provider
 * that keeps the arrays it hands out, without saying it is transient, returns once they were
 * zeroed.
 *
 * <p>Each version holds copies of its material ({@link AesKey} and the {@link GcmStreams} that
 * match headers against it), which {@link #close()}, or a read that no longer lists it, destroys.
 * Callers get {@code GcmStreams} of their own, made under this object's lock from a whole copy of
 * the key, and destroy them once their stream is made: a {@code close()} from another thread
 * never leaves a caller with a zeroed key. {@code close()} waits for no read of the provider
 * (Hadoop's shutdown hook closes file systems while it holds the {@code FileSystem} cache's lock,
 * which making a {@code jceks://} provider needs): a read that ends after it keeps nothing.
 * Thread-safe.
 */
public final class SealedKeys implements Closeable {
    /**
     * The context of compressed sealed files' messages (empty for the others): part of their
     * key derivation, so that the key commitment tells a reader, authenticated, which it has.
     */
    public static final byte[] SNAPPY_CONTEXT = "sealpipe.fs.compress=snappy".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

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
    public record Match(GcmStreams streams, boolean compressed) {}

    /** A file that no version of the key wrote: another key's, or no sealed file. */
    public static final class NoVersionMatches extends IOException {
        private static final long serialVersionUID = 1L;

        public NoVersionMatches(String message) {
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
    public interface Providers {
        KeyProvider open() throws IOException;
    }

    /**
     * One read of the provider, run by the caller that began it, with no lock held; the callers
     * that need a read meanwhile wait for it to be done.
     */
    private static final class Read {
        final long startedAt;
        final CountDownLatch done = new CountDownLatch(1);
        Exception failure; // why it failed, null if it succeeded: set before done counts down

        Read(long startedAt) {
            this.startedAt = startedAt;
        }
    }

    private final Providers providers;
    private final LongSupplier nanoTime; // System.nanoTime, or a test's clock
    private final String providerPath;
    private final String keyName;
    private final int parallelism;
    private final long refreshNanos;
    private final long missRefreshNanos;
    private Map<String, Version> byMaterial = new LinkedHashMap<>(); // guarded by this; by SHA-256 of the material
    private Version current;         // guarded by this; null until read, or if the current version cannot write
    private String cannotWrite;      // guarded by this; why current is null after a read
    private boolean readOnce;        // guarded by this; whether a read of the provider got as far as keeping
    private Exception lastFailure;   // guarded by this; why the last read failed, null if it succeeded
    private Exception unreachable;   // guarded by this; lastFailure if the provider itself failed (a KMS outage)
    private long failedReadAt;       // guarded by this; nanoTime at which that read began
    private long readAt;             // guarded by this; nanoTime of the last read that succeeded
    private Read reading;            // guarded by this; the read in progress, null if none
    private int waiting;             // guarded by this; callers waiting for the read in progress
    private boolean missRead;        // guarded by this; whether a file that no version kept matched made a read
    private long missReadAt;         // guarded by this; nanoTime at which the last such read began
    private volatile boolean closed; // set under this

    private SealedKeys(Providers providers, LongSupplier nanoTime, String providerPath, String keyName, int parallelism,
            long refreshNanos, long missRefreshNanos) {
        this.providers = providers;
        this.nanoTime = nanoTime;
        this.providerPath = providerPath;
        this.keyName = keyName;
        this.parallelism = parallelism;
        this.refreshNanos = refreshNanos;
        this.missRefreshNanos = missRefreshNanos;
    }

    /**
     * The key named by {@code sealpipe.fs.key.name} in the provider at
     * {@code sealpipe.fs.key.provider.path}, checked to exist now; its versions are read at the
     * first file created or opened.
     *
     * @throws IOException if either is unset, the provider cannot be made or the key does not
     *     exist in it
     */
    public static SealedKeys load(Configuration conf, int parallelism) throws IOException {
        return load(conf, parallelism, true);
    }

    /** {@link #load(Configuration, int)}, checking that the key exists now only if {@code check}. */
    public static SealedKeys load(Configuration conf, int parallelism, boolean check) throws IOException {
        String path = conf.getTrimmed(SealedFileSystem.KEY_PROVIDER_PATH);
        return load(conf, parallelism, () -> newProvider(conf, path), System::nanoTime, check);
    }

    /**
     * {@link #load(Configuration, int)} with the providers made by {@code providers} and the time
     * told by {@code nanoTime} (as {@link System#nanoTime()}): for tests.
     */
    public static SealedKeys load(Configuration conf, int parallelism, Providers providers, LongSupplier nanoTime)
            throws IOException {
        return load(conf, parallelism, providers, nanoTime, true);
    }

    /**
     * {@link #load(Configuration, int, Providers, LongSupplier)}, asking the provider for the key's
     * metadata first only if {@code check}: a file system in envelope mode reads direct-key files
     * with these, and must start under a KMS that denies {@code GET_METADATA}.
     */
    public static SealedKeys load(Configuration conf, int parallelism, Providers providers, LongSupplier nanoTime, boolean check)
            throws IOException {
        String path = required(conf, SealedFileSystem.KEY_PROVIDER_PATH,
                "the URI of the Hadoop KeyProvider that holds the key, such as jceks://file/etc/sealpipe/keys.jceks or kms://http@kms:9600/kms");
        String name = required(conf, SealedFileSystem.KEY_NAME,
                "the name of the key in " + path + " (create one with: hadoop key create NAME -size 256 -provider " + path + ")");
        long refreshNanos = nanos(conf, SealedFileSystem.KEY_REFRESH_SECONDS,
                SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS);
        long missRefreshNanos = nanos(conf, SealedFileSystem.KEY_MISS_REFRESH_SECONDS,
                SealedFileSystem.DEFAULT_KEY_MISS_REFRESH_SECONDS);
        if (!check) {
            return new SealedKeys(providers, nanoTime, path, name, parallelism, refreshNanos, missRefreshNanos);
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
        return new SealedKeys(providers, nanoTime, path, name, parallelism, refreshNanos, missRefreshNanos);
    }

    /** The seconds set for {@code key} (0 or more), in nanoseconds. */
    public static long nanos(Configuration conf, String key, long defaultSeconds) {
        long seconds = conf.getLong(key, defaultSeconds);
        if (seconds < 0) {
            throw new IllegalArgumentException(key + " must be 0 or more, not " + seconds);
        }
        return seconds > Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : seconds * 1_000_000_000L;
    }

    /**
     * A provider's failure (a KMS that is down, refuses the caller, or times out) as a message
     * that names the key and the provider, which a KMS client's own messages do not.
     */
    private static IOException unreadable(String name, String path, IOException e) {
        if (KmsGeneration.refusal(e) != null) { // HTTP 403: a refusal, not an outage
            org.apache.hadoop.security.AccessControlException denied = new org.apache.hadoop.security.AccessControlException(
                    "the KMS " + path + " refused to hand out the key '" + name + "' (" + SealedFileSystem.KEY_PROVIDER_PATH
                    + "): " + e.getMessage() + "; a secured KMS gives clients no key, only data keys: set "
                    + SealedFileSystem.KEY_MODE + "=envelope (docs/sealed-files.md, \"Keys in a KMS\")");
            denied.initCause(e);
            return denied;
        }
        return new IOException("cannot read the key '" + name + "' from " + path + " (" + SealedFileSystem.KEY_PROVIDER_PATH
                + "): " + e + "; check that the provider is reachable and lets this user read the key", e);
    }

    public static String required(Configuration conf, String key, String what) throws IOException {
        String value = conf.getTrimmed(key);
        if (value == null || value.isEmpty()) {
            throw new IOException(key + " is not set: set it to " + what);
        }
        return value;
    }

    public static KeyProvider newProvider(Configuration conf, String path) throws IOException {
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
    public String keyName() {
        return keyName;
    }

    /** Whether {@link #close()} was called: the file system is closed and its keys are gone. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Streams of the current version, for writing a plain or a compressed file: the caller's
     * own, to destroy once its stream is made. Once the versions are stale this reads them again,
     * or waits for the read in progress.
     *
     * @throws IOException if this was closed, the provider cannot be read, has no current version
     *     (the key was deleted) or its material is not 256 bits
     */
    public GcmStreams forWriting(boolean compressed) throws IOException {
        Read read;
        boolean mine;
        synchronized (this) {
            checkOpen();
            if (current != null && !stale()) {
                return current.streams(compressed);
            }
            if (reading == null && retryingLater()) { // the provider failed a moment ago: not again yet
                throw new IOException(unreachable.getMessage() + retryNote(), unreachable);
            }
            mine = reading == null;
            read = mine ? beginRead() : join(reading);
        }
        Exception failed = mine ? run(read) : await(read);
        synchronized (this) {
            checkOpen();
            if (failed != null) { // nothing newer is known
                throw rethrown("", failed);
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
     * among the versions kept while they are fresh or another caller reads the provider, then
     * after reading them again (a version rolled by another process since). That read is made
     * at once when the versions are stale, and for a file that none of the fresh versions matches
     * at most once per {@code sealpipe.fs.key.miss.refresh.seconds}. If the read fails, the
     * versions read before are tried; if the provider says the key is gone, none is.
     *
     * @throws NoVersionMatches naming {@code path}, the key and the versions tried, if no version
     *     matches
     * @throws IOException naming {@code path} if this was closed, or no version matches and the
     *     last read of the provider failed (saying why)
     */
    public Match forReading(byte[] header, Path path) throws IOException {
        Read read;
        boolean mine;
        synchronized (this) {
            checkOpen();
            // after the provider failed (a KMS outage), the versions kept serve until the next try is due
            boolean fresh = readOnce && (!stale() || retryingLater());
            if (fresh || reading != null) { // a caller that the versions kept serve never waits for a read
                Match found = match(header);
                if (found != null) {
                    return found;
                }
            }
            if (reading != null) {
                read = join(reading);
                mine = false;
            } else if (retryingLater()) {
                throw new IOException(path + ": " + unreachable.getMessage() + retryNote(), unreachable);
            } else if (!fresh || !missRead || nanoTime.getAsLong() - missReadAt >= missRefreshNanos) {
                read = beginRead();
                mine = true;
            } else {
                if (lastFailure != null) {
                    throw rethrown(path + ": ", lastFailure);
                }
                throw noVersionMatches(path, "; a version rolled since the provider was last read for such a file, less"
                        + " than " + SealedFileSystem.KEY_MISS_REFRESH_SECONDS + "=" + missRefreshNanos / 1_000_000_000L
                        + " seconds ago, is tried once they have passed");
            }
            if (fresh) { // this file made (or shares) the read: the next such file waits for the interval
                missRead = true;
                missReadAt = read.startedAt;
            }
        }
        // a KMS outage leaves the versions read before; a deleted key, none
        Exception failed = mine ? run(read) : await(read);
        synchronized (this) {
            checkOpen();
            Match found = match(header);
            if (found != null) {
                return found;
            }
            if (failed != null) {
                throw rethrown(path + ": ", failed);
            }
            throw noVersionMatches(path, "");
        }
    }

    /** A read's failure for one caller: a refusal stays an {@code AccessControlException}. */
    private static IOException rethrown(String prefix, Exception failure) {
        if (failure instanceof org.apache.hadoop.security.AccessControlException) {
            IOException denied = new org.apache.hadoop.security.AccessControlException(prefix + failure.getMessage());
            denied.initCause(failure);
            return denied;
        }
        return new IOException(prefix + failure.getMessage(), failure);
    }

    /** Under this: a file matches no version kept ({@code more} says more about why, or is empty). */
    private NoVersionMatches noVersionMatches(Path path, String more) {
        List<String> tried = byMaterial.values().stream().map(Version::name).toList();
        return new NoVersionMatches(path + ": no version of the key '" + keyName + "' in " + providerPath
                + " matches the file's key commitment (tried " + String.join(", ", tried) + "): the file was"
                + " written under another key, or it is not a sealed file (a version deleted from the provider is"
                + " not tried" + more + "). No byte of it was decrypted.");
    }

    private boolean stale() {
        return nanoTime.getAsLong() - readAt >= refreshNanos; // 0: always
    }

    /**
     * Under this: whether the provider itself failed at the last read (it could not be reached or
     * read, not "no current version") less than the retry interval ago: the shorter of
     * {@code sealpipe.fs.key.miss.refresh.seconds} and {@code sealpipe.fs.key.refresh.seconds} (0:
     * every caller tries again). Each try may wait for a KMS client's timeout, which every file
     * opened or created one after another would otherwise wait for.
     */
    private boolean retryingLater() {
        return unreachable != null && nanoTime.getAsLong() - failedReadAt < Math.min(missRefreshNanos, refreshNanos);
    }

    /** Under this: what a caller refused because of {@link #retryingLater()} is told. */
    private String retryNote() {
        return " (the provider is tried again " + Math.min(missRefreshNanos, refreshNanos) / 1_000_000_000L
                + " seconds after that read failed: " + SealedFileSystem.KEY_MISS_REFRESH_SECONDS + ")";
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

    /** Under this: a read that the caller must {@link #run}, the one in progress until it is done. */
    private Read beginRead() {
        reading = new Read(nanoTime.getAsLong());
        return reading;
    }

    /** Under this: {@code read}, which the caller will {@link #await}. */
    private Read join(Read read) {
        waiting++;
        return read;
    }

    /** How many callers wait for the read in progress: for tests. */
    public synchronized int callersWaitingForRead() {
        return waiting;
    }

    /**
     * Waits for {@code read}, begun by another caller (this caller {@link #join joined} it).
     *
     * @return why it failed, null if it succeeded
     * @throws InterruptedIOException if the caller is interrupted while it waits
     */
    private Exception await(Read read) throws InterruptedIOException {
        try {
            read.done.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for another caller's read of the key '"
                    + keyName + "' from " + providerPath);
        } finally {
            synchronized (this) {
                waiting--;
            }
        }
        return read.failure;
    }

    /**
     * Runs {@code read}: reads every version and the current one from a new provider (what another
     * process rolled or deleted since) with no lock held, then, under this object's lock, keeps
     * exactly the versions read, by material, and destroys the others: all of them if the key is
     * gone. A provider that fails changes nothing. The material arrays read are zeroed in any case.
     * Then the read is done: the callers waiting for it go on, and the next caller that needs a
     * read begins one.
     *
     * @return why it failed (the provider could not be read, said the key is gone, or this was
     *     closed meanwhile), null if it succeeded
     */
    private Exception run(Read read) {
        Exception failure = null;
        boolean ended = false;
        boolean providerFailed = true;
        try {
            ProviderVersions found = readProvider();
            providerFailed = false;
            try {
                synchronized (this) {
                    checkOpen();
                    keep(found);
                }
            } finally {
                found.wipe();
            }
            ended = true;
        } catch (IOException | RuntimeException e) {
            failure = e;
            ended = true;
        } finally {
            if (!ended) { // an Error, thrown on to this caller: the callers waiting still learn that nothing was read
                failure = new IOException("the read of the key '" + keyName + "' from " + providerPath
                        + " ended with an error (thrown to the caller that made it)");
            }
            synchronized (this) {
                lastFailure = failure;
                boolean refused = failure instanceof org.apache.hadoop.security.AccessControlException;
                if (refused && !closed) { // the user lost access: what was read before is no longer theirs to use
                    forget();
                    cannotWrite = failure.getMessage();
                }
                unreachable = failure != null && providerFailed && !refused ? failure : null;
                failedReadAt = read.startedAt;
                read.failure = failure;
                reading = null;
            }
            read.done.countDown();
        }
        return failure;
    }

    /**
     * What one read of the provider returned: every version, and the current one (null: none),
     * whose material arrays {@link #wipe()} zeroes, unless the provider is transient (its arrays
     * are its own, not copies made for this read).
     */
    private static final class ProviderVersions {
        final String provider; // its class, for messages
        private final boolean wipeable;
        List<KeyVersion> all;
        KeyVersion current;

        ProviderVersions(KeyProvider provider) {
            this.provider = provider.getClass().getName();
            this.wipeable = !provider.isTransient();
        }

        void wipe() {
            if (!wipeable) {
                return;
            }
            if (all != null) {
                for (KeyVersion version : all) {
                    wipe(version);
                }
            }
            wipe(current);
        }

        private static void wipe(KeyVersion version) {
            byte[] material = version == null ? null : version.getMaterial();
            if (material != null) {
                Arrays.fill(material, (byte) 0);
            }
        }
    }

    /**
     * One read of a new provider, closed after it (its failure to close changes nothing read).
     * The material read is zeroed if it fails; the caller zeroes it once kept.
     */
    private ProviderVersions readProvider() throws IOException {
        KeyProvider provider = providers.open();
        ProviderVersions found = new ProviderVersions(provider);
        boolean complete = false;
        try {
            found.all = provider.getKeyVersions(keyName);
            found.current = provider.getCurrentKey(keyName);
            complete = true;
        } catch (IOException e) {
            throw closing(provider, unreadable(keyName, providerPath, e));
        } catch (RuntimeException e) {
            throw closing(provider, e);
        } finally {
            if (!complete) {
                found.wipe();
            }
        }
        try {
            provider.close();
        } catch (IOException | RuntimeException closing) {
            // What was read stands; a KMS client's queue that fails to stop has nothing of ours.
        }
        return found;
    }

    /** Closes {@code provider} after a read that failed with {@code failure}, which it returns. */
    private static <E extends Exception> E closing(KeyProvider provider, E failure) {
        try {
            provider.close();
        } catch (IOException | RuntimeException closing) {
            failure.addSuppressed(closing);
        }
        return failure;
    }

    /** Replaces the versions kept with {@code found}'s, reusing those of the same material. */
    private void keep(ProviderVersions found) throws IOException {
        readOnce = true;
        readAt = nanoTime.getAsLong();
        KeyVersion now = found.current;
        if (now == null || now.getMaterial() == null || found.all == null) {
            forget();
            cannotWrite = "the key '" + keyName + "' in " + providerPath + " has no current version: it was deleted"
                    + " (create it with: hadoop key create " + keyName + " -size 256 -provider " + providerPath
                    + "), or this user may not read its material";
            throw new IOException(cannotWrite);
        }
        Map<String, Version> kept = byMaterial;
        Map<String, Version> fresh = new LinkedHashMap<>();
        try {
            for (KeyVersion version : found.all) {
                keep(version, kept, fresh);
            }
            current = keep(now, kept, fresh);
        } catch (RuntimeException | Error e) { // a version's streams could not be made: keep nothing
            fresh.values().forEach(Version::destroy);
            forget();
            cannotWrite = "the versions of the key '" + keyName + "' could not be kept: " + e;
            throw e;
        }
        kept.values().forEach(Version::destroy); // no longer in the provider: deleted
        byMaterial = fresh;
        int bytes = now.getMaterial().length;
        if (current == null && isZeros(now.getMaterial())) {
            cannotWrite = "version " + now.getVersionName() + " of the key '" + keyName + "' in " + providerPath
                    + " has material of zero bytes only, which is no key (what a provider that keeps the arrays it"
                    + " hands out without saying it is transient, here " + found.provider
                    + ", returns once sealpipe has zeroed them after a read): read the key through a provider that"
                    + " hands out copies, such as jceks:// or kms://";
        } else if (current == null || bytes != WRITE_KEY_BYTES) {
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
     * written), or zero bytes only (no key: see the class comment).
     */
    private Version keep(KeyVersion version, Map<String, Version> kept, Map<String, Version> fresh) {
        byte[] material = version.getMaterial();
        if (material == null || (material.length != 16 && material.length != 32) || isZeros(material)) {
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

    /** Whether {@code material} is zero bytes only: no key, but an array zeroed after it was handed out. */
    private static boolean isZeros(byte[] material) {
        int any = 0;
        for (byte b : material) {
            any |= b;
        }
        return any == 0;
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
     * provider running meanwhile finds this closed, keeps nothing and zeroes what it read.
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
