package io.sealpipe.internal.hadoop;

import io.sealpipe.AesKey;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.EnvelopeKms;
import io.sealpipe.hadoop.HadoopEnvelopeKms;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.Envelope;
import io.sealpipe.internal.KeyAccess;
import io.sealpipe.internal.hadoop.EnvelopeWrapping;
import io.sealpipe.internal.hadoop.KmsGeneration;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.AccessControlException;

/**
 * Data keys that a KMS generates and unwraps (envelope mode): the KMS's key never leaves it. The
 * KMS is an {@link EnvelopeKms} of the class {@code sealpipe.fs.kms.class}, by default {@link
 * HadoopEnvelopeKms} (Hadoop's KMS protocol with {@code kms://}, a keystore locally).
 *
 * <p><b>Writing.</b> A data key is generated and unwrapped (two KMS calls), then seals new files
 * for {@code sealpipe.fs.data.key.write.seconds} and at most {@code
 * sealpipe.fs.data.key.write.files} files (either 0: a data key per file); each file's own key
 * still differs, derived from the data key and the file's random salt. One caller generates
 * while the others that need a new key wait for it.
 *
 * <p><b>Reading.</b> Unwrapped data keys are kept, found by their wrapped form, for {@code
 * sealpipe.fs.data.key.read.seconds} from the unwrap, and at most {@code
 * sealpipe.fs.data.key.read.keys} of them (the least recently used goes first; either 0: none
 * kept); a key dropped is zeroed. A data key this JVM generated is kept for reading too, so its
 * own files cost no unwrap. Callers that need the same unwrap at once share one call. A KMS that
 * refuses (HTTP 403: the user lost {@code DECRYPT_EEK}) or fails is asked again by the next file;
 * nothing is kept from a failed call, and keys kept before go on serving only until their time
 * is up, so a revoked access stops reads within {@code sealpipe.fs.data.key.read.seconds}.
 *
 * <p>The provider is made at the first call and made again once {@code
 * sealpipe.fs.key.refresh.seconds} have passed, so that a key rolled by another process (a new
 * key version, which new data keys are then wrapped under) is seen. Thread-safe.
 * {@link #close()} zeroes every data key kept and closes the provider, waiting for no KMS call.
 */
public final class EnvelopeKeys implements Closeable {
    /** Makes the KMS client that wraps and unwraps data keys: for tests, one that counts its calls. */
    @FunctionalInterface
    public interface Opener {
        EnvelopeKms open() throws IOException;
    }

    /** A data key kept for writing: its envelope and its key, with when it was made and how often used. */
    private static final class WriteKey {
        final Envelope envelope;
        final AesKey key;
        final long madeAt;
        int files;

        WriteKey(Envelope envelope, AesKey key, long madeAt) {
            this.envelope = envelope;
            this.key = key;
            this.madeAt = madeAt;
        }
    }

    /** An unwrapped data key kept for reading, and when it was unwrapped. */
    private record ReadKey(AesKey key, long unwrappedAt) {}

    private final Opener opener;
    private final LongSupplier nanoTime;
    private final String location;
    private final String locationSetting; // the setting that names the KMS: the provider path, or the client class
    private final String keyName;
    private final int parallelism;
    private final long refreshNanos;
    private final long writeNanos;
    private final long writeFiles;
    private final long readNanos;
    private final int readKeys;
    private CompletableFuture<Void> generatingCall; // guarded by this; the generation in progress, null if none
    private Lease lease;                          // guarded by this; the extension in use, null until the first call
    private WriteKey writeKey;                    // guarded by this; null: none, or used up
    private final LinkedHashMap<ByteBuffer, ReadKey> readKeysKept = new LinkedHashMap<>(16, 0.75f, true); // guarded by this
    private final Map<ByteBuffer, CompletableFuture<Void>> unwrapping = new HashMap<>(); // guarded by this
    private long calls; // guarded by this: KMS calls made (generate and decrypt), for tests and reports
    private int waiting; // guarded by this: callers waiting for another's KMS call, for tests
    private volatile boolean closed; // written under this

    EnvelopeKeys(Opener opener, LongSupplier nanoTime, String location, String locationSetting, String keyName,
            int parallelism,
            long refreshNanos, long writeNanos, long writeFiles, long readNanos, int readKeys) {
        this.opener = opener;
        this.nanoTime = nanoTime;
        this.location = location;
        this.locationSetting = locationSetting;
        this.keyName = keyName;
        this.parallelism = parallelism;
        this.refreshNanos = refreshNanos;
        this.writeNanos = writeNanos;
        this.writeFiles = writeFiles;
        this.readNanos = readNanos;
        this.readKeys = readKeys;
    }

    /**
     * The data keys of the key {@code sealpipe.fs.key.name} in the KMS of {@code
     * sealpipe.fs.kms.class} (by default the provider at {@code sealpipe.fs.key.provider.path}),
     * with the bounds set in {@code conf}. Asks the KMS nothing yet (a KMS that denies {@code
     * GET_METADATA} must not stop the file system from starting). {@code opener}: null for the
     * configured class, which is made with {@code conf} and {@code binding}, the URI of the file
     * system that is sealed ({@link SealedFileSystem#KMS_BINDING}).
     */
    public static EnvelopeKeys load(Configuration conf, URI binding, int parallelism, Opener opener, LongSupplier nanoTime)
            throws IOException {
        Class<? extends EnvelopeKms> kmsClass = kmsClass(conf);
        boolean hadoop = kmsClass == HadoopEnvelopeKms.class;
        String path = hadoop ? SealedKeys.required(conf, SealedFileSystem.KEY_PROVIDER_PATH,
                "the URI of the Hadoop KeyProvider that wraps the data keys, such as kms://http@kms:9600/kms")
                : kmsClass.getName();
        String name = SealedKeys.required(conf, SealedFileSystem.KEY_NAME,
                "the name of the key in " + path + " that wraps the data keys");
        long refresh = SealedKeys.nanos(conf, SealedFileSystem.KEY_REFRESH_SECONDS,
                SealedFileSystem.DEFAULT_KEY_REFRESH_SECONDS);
        long writeNanos = SealedKeys.nanos(conf, SealedFileSystem.DATA_KEY_WRITE_SECONDS,
                SealedFileSystem.DEFAULT_DATA_KEY_WRITE_SECONDS);
        long writeFiles = conf.getLong(SealedFileSystem.DATA_KEY_WRITE_FILES, SealedFileSystem.DEFAULT_DATA_KEY_WRITE_FILES);
        if (writeFiles < 0) {
            throw new IllegalArgumentException(SealedFileSystem.DATA_KEY_WRITE_FILES + " must be 0 or more, not " + writeFiles);
        }
        long readNanos = SealedKeys.nanos(conf, SealedFileSystem.DATA_KEY_READ_SECONDS,
                SealedFileSystem.DEFAULT_DATA_KEY_READ_SECONDS);
        int readKeys = conf.getInt(SealedFileSystem.DATA_KEY_READ_KEYS, SealedFileSystem.DEFAULT_DATA_KEY_READ_KEYS);
        if (readKeys < 0) {
            throw new IllegalArgumentException(SealedFileSystem.DATA_KEY_READ_KEYS + " must be 0 or more, not " + readKeys);
        }
        Opener made = opener;
        if (made == null) {
            Configuration kmsConf = new Configuration(conf);
            if (binding != null) {
                kmsConf.set(SealedFileSystem.KMS_BINDING, binding.toString());
            }
            made = () -> newKms(kmsClass, kmsConf);
        }
        String setting = hadoop ? SealedFileSystem.KEY_PROVIDER_PATH : SealedFileSystem.KMS_CLASS;
        return new EnvelopeKeys(made, nanoTime, path, setting, name, parallelism, refresh, writeNanos, writeFiles,
                readNanos, readKeys);
    }

    /**
     * The class {@code sealpipe.fs.kms.class} names, checked: an {@link EnvelopeKms} with a
     * public constructor that takes a Configuration.
     *
     * @throws IllegalArgumentException naming the setting if it is not
     */
    public static Class<? extends EnvelopeKms> kmsClass(Configuration conf) {
        Class<? extends EnvelopeKms> kmsClass;
        try {
            kmsClass = conf.getClass(SealedFileSystem.KMS_CLASS, HadoopEnvelopeKms.class, EnvelopeKms.class);
            kmsClass.getConstructor(Configuration.class);
            if (java.lang.reflect.Modifier.isAbstract(kmsClass.getModifiers())
                    || !java.lang.reflect.Modifier.isPublic(kmsClass.getModifiers())) {
                throw new NoSuchMethodException(kmsClass.getName() + " is abstract or not public");
            }
        } catch (LinkageError e) {
            throw new IllegalArgumentException(SealedFileSystem.KMS_CLASS + " is " + conf.get(SealedFileSystem.KMS_CLASS)
                    + ", which cannot be loaded: " + missing(e), e);
        } catch (RuntimeException | NoSuchMethodException e) {
            throw new IllegalArgumentException(SealedFileSystem.KMS_CLASS + " is " + conf.get(SealedFileSystem.KMS_CLASS)
                    + ", which is not a class that implements " + EnvelopeKms.class.getName() + " with a public"
                    + " constructor that takes a Hadoop Configuration (" + e.getMessage() + "); leave it unset for"
                    + " Hadoop's key providers (docs/sealed-files.md, \"Other KMSs\")", e);
        }
        return kmsClass;
    }

    /** What a class missing from the class path means: for AWS KMS, the SDK's jars. */
    private static String missing(LinkageError e) {
        return "a class it needs is missing (" + e.getMessage() + "); io.sealpipe.hadoop.AwsEnvelopeKms"
                + " needs the AWS SDK v2 on the class path: S3A's bundle (software.amazon.awssdk:bundle), or"
                + " software.amazon.awssdk:kms and software.amazon.awssdk:apache-client";
    }

    /** A new client of {@code kmsClass}, by its constructor that takes the configuration. */
    private static EnvelopeKms newKms(Class<? extends EnvelopeKms> kmsClass, Configuration conf) throws IOException {
        EnvelopeKms kms;
        try {
            kms = kmsClass.getConstructor(Configuration.class).newInstance(conf);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof LinkageError missing) {
                throw new IOException("cannot make the KMS client " + kmsClass.getName() + " (" + SealedFileSystem.KMS_CLASS
                        + "): " + missing(missing), missing);
            }
            throw new IOException("cannot make the KMS client " + kmsClass.getName() + " (" + SealedFileSystem.KMS_CLASS
                    + "): " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IOException("cannot make the KMS client " + kmsClass.getName() + " (" + SealedFileSystem.KMS_CLASS
                    + "): " + e, e);
        }
        int kind;
        try {
            kind = kms.kind();
        } catch (RuntimeException | Error e) {
            closeQuietly(kms);
            throw e;
        }
        if (kind != Envelope.KIND_HADOOP && kind != Envelope.KIND_AWS && (kind < Envelope.KIND_USER_FIRST || kind > 255)) {
            closeQuietly(kms);
            throw new IOException("the KMS client " + kmsClass.getName() + " (" + SealedFileSystem.KMS_CLASS
                    + ") names envelope kind " + kind + ", which is not one a client may name: 1 (Hadoop's key"
                    + " providers), 2 (AWS KMS), or " + Envelope.KIND_USER_FIRST + " to 255 for a KMS of a user's own"
                    + " (docs/sealed-files.md, \"Other KMSs\")");
        }
        return kms;
    }

    /** What a new file is sealed with: its envelope, and streams of the caller's own (to destroy once used). */
    public record Sealing(Envelope envelope, GcmStreams streams) {}

    /**
     * The envelope and streams for a new file: under the data key kept for writing while it is
     * within its bounds, else under a new one (a {@code GENERATE_EEK} and a {@code DECRYPT_EEK}).
     *
     * @param file the new file, named in a failure's message
     * @throws IOException naming the file, the key and the provider if the KMS refuses or fails, or
     *     answers with a data key of the wrong size ({@link AccessControlException} for a refusal)
     */
    public Sealing forWriting(boolean compressed, Object file) throws IOException {
        try {
            return forWriting(compressed);
        } catch (AccessControlException e) {
            AccessControlException denied = new AccessControlException(file + ": " + e.getMessage());
            denied.initCause(e);
            throw denied;
        } catch (IOException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /**
     * {@link #forWriting(boolean, Object)} without naming the file.
     *
     * @throws IOException naming the key and the provider, as there
     */
    public Sealing forWriting(boolean compressed) throws IOException {
        while (true) {
            CompletableFuture<Void> call;
            boolean mine;
            synchronized (this) {
                checkOpen();
                sweep();
                WriteKey key = writeKey;
                if (key != null) {
                    key.files++;
                    Sealing sealing = sealing(key, compressed);
                    sweep(); // the last file it may seal: zeroed now (the streams have their own copy)
                    return sealing;
                }
                call = generatingCall;
                mine = call == null;
                if (mine) {
                    call = new CompletableFuture<>();
                    generatingCall = call;
                }
            }
            if (!mine) { // another caller is generating: its key, or its failure, is this caller's too
                awaitCall(call, "a new file", "generate a data key");
                continue;
            }
            WriteKey made = null;
            boolean kept = false;
            try {
                made = generate();
                synchronized (this) {
                    checkOpen();
                    keepForReading(made.envelope.wrappedIdentity(), made.key); // its own files cost no unwrap
                    made.files = 1;
                    if (made.files < writeFiles && writeNanos > 0) {
                        writeKey = made;
                        kept = true;
                        sweepAfter(writeNanos);
                    }
                    return sealing(made, compressed);
                }
            } catch (IOException | RuntimeException | Error e) {
                call.completeExceptionally(e);
                throw e;
            } finally {
                if (made != null && !kept) {
                    made.key.destroy(); // a data key per file: this file's streams have their copy
                }
                synchronized (this) {
                    generatingCall = null;
                }
                call.complete(null);
            }
        }
    }

    /** Under this: the envelope and streams of {@code key} for one file. */
    private Sealing sealing(WriteKey key, boolean compressed) throws IOException {
        Envelope envelope = key.envelope.withContent(compressed);
        return new Sealing(envelope, streams(key.key, envelope));
    }

    /** Under this (a close() meanwhile would zero the key): streams of the caller's own. */
    private GcmStreams streams(AesKey key, Envelope envelope) {
        return GcmStreams.builder().key(key).context(envelope.context()).parallelism(parallelism).build();
    }

    /** A new data key: generated wrapped by the KMS, then unwrapped by it. */
    private WriteKey generate() throws IOException {
        Lease held = acquire();
        try {
            return generate(held.kms);
        } finally {
            release(held);
        }
    }

    private WriteKey generate(EnvelopeKms kms) throws IOException {
        EnvelopeKms.DataKey made;
        try {
            count();
            made = kms.generate(keyName);
        } catch (IOException e) {
            throw failed("generate a data key under", null, kms, e);
        } catch (RuntimeException e) {
            throw failed("generate a data key under", null, kms, new IOException(e));
        }
        AesKey given = made == null ? null : made.key();
        try {
            Envelope envelope = EnvelopeWrapping.envelope(kms, keyName, false, made);
            AesKey key = given == null ? unwrap(kms, envelope, null) : KeyAccess.copy(given);
            return new WriteKey(envelope, key, nanoTime.getAsLong());
        } finally {
            if (given != null) {
                given.destroy();
            }
        }
    }

    /**
     * Streams of the caller's own (to destroy once the file is open) for the file {@code path}
     * whose envelope is {@code envelope}: under the data key kept for it, or one unwrapped now.
     *
     * @throws IOException naming {@code path}, the key and the provider if the KMS refuses
     *     ({@link AccessControlException}) or fails, or answers with a key of the wrong size
     */
    public GcmStreams forReading(Envelope envelope, Path path) throws IOException {
        if (!envelope.keyName().equals(keyName)) {
            // Another key's data key: the file was not sealed under this file system's key (a
            // writer with rights on another key cannot pass its files off as this key's).
            throw new SealedKeys.NoVersionMatches(path + ": its envelope names the key '" + envelope.keyName()
                    + "', not this file system's key '" + keyName + "' (" + SealedFileSystem.KEY_NAME + " in "
                    + location + "): refused before any KMS call. No byte of it was decrypted.");
        }
        ByteBuffer id = envelope.wrappedIdentity();
        boolean keeping = readKeys > 0 && readNanos > 0;
        while (true) {
            CompletableFuture<Void> call;
            boolean mine;
            synchronized (this) {
                checkOpen();
                sweep();
                ReadKey kept = readKeysKept.get(id);
                if (kept != null) {
                    return streams(kept.key(), envelope);
                }
                call = keeping ? unwrapping.get(id) : null;
                mine = call == null;
                if (mine && keeping) {
                    call = new CompletableFuture<>();
                    unwrapping.put(id, call);
                }
            }
            if (!mine) {
                awaitCall(call, path.toString(), "unwrap its data key"); // then the key is kept, or its failure
                continue;
            }
            AesKey key = null;
            try {
                Lease held = acquire();
                try {
                    key = unwrap(held.kms, envelope, path);
                } finally {
                    release(held);
                }
                synchronized (this) {
                    checkOpen();
                    keepForReading(id, key);
                    return streams(key, envelope);
                }
            } catch (IOException | RuntimeException | Error e) {
                if (call != null) {
                    call.completeExceptionally(e);
                }
                throw e;
            } finally {
                if (key != null) {
                    key.destroy(); // the map and the streams have their own copies
                }
                if (call != null) {
                    synchronized (this) {
                        unwrapping.remove(id);
                    }
                    call.complete(null);
                }
            }
        }
    }

    /**
     * Waits for another caller's KMS call ({@code what}, for {@code path}), counted among the
     * callers waiting; its failure is this caller's too.
     */
    private void awaitCall(CompletableFuture<Void> call, String path, String what) throws IOException {
        synchronized (this) {
            waiting++;
        }
        try {
            call.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException(path + ": interrupted while waiting for the KMS to " + what);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof AccessControlException) {
                AccessControlException again = new AccessControlException(path + ": " + cause.getMessage());
                again.initCause(cause);
                throw again;
            }
            throw new IOException(path + ": " + cause.getMessage(), cause);
        } finally {
            synchronized (this) {
                waiting--;
            }
        }
    }

    /** Under this: keeps {@code key} (a copy) for reading, within the bounds; zeroes what it drops. */
    private void keepForReading(ByteBuffer id, AesKey key) {
        if (readKeys == 0 || readNanos == 0) {
            return;
        }
        ReadKey before = readKeysKept.put(id, new ReadKey(KeyAccess.copy(key), nanoTime.getAsLong()));
        if (before != null) {
            before.key().destroy();
        }
        sweepAfter(readNanos);
        while (readKeysKept.size() > readKeys) {
            Iterator<ReadKey> eldest = readKeysKept.values().iterator();
            eldest.next().key().destroy();
            eldest.remove();
        }
    }

    /**
     * Under this: zeroes and drops the data keys whose bounds are reached: the one kept for
     * writing once it sealed its files or its time is up, those kept for reading once their time
     * is up.
     */
    private void sweep() {
        WriteKey key = writeKey;
        if (key != null && (key.files >= writeFiles || nanoTime.getAsLong() - key.madeAt >= writeNanos)) {
            key.key.destroy();
            writeKey = null;
        }
        dropExpired();
    }

    /** One daemon thread for every file system's timed sweeps: a key kept is dropped in time even if no file comes. */
    private static final java.util.concurrent.ScheduledExecutorService SWEEPER =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "sealpipe-data-key-sweeper");
                t.setDaemon(true);
                return t;
            });

    /** Sweeps again once {@code nanos} have passed (and a moment more, so that what was kept then is due). */
    private void sweepAfter(long nanos) {
        if (nanos == Long.MAX_VALUE) {
            return;
        }
        SWEEPER.schedule(() -> {
            synchronized (this) {
                if (!closed) {
                    sweep();
                }
            }
        }, nanos + 1_000_000L, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Under this: drops (and zeroes) the data keys kept for reading whose time is up. */
    private void dropExpired() {
        long now = nanoTime.getAsLong();
        for (Iterator<ReadKey> it = readKeysKept.values().iterator(); it.hasNext();) {
            ReadKey kept = it.next();
            if (now - kept.unwrappedAt() >= readNanos) {
                kept.key().destroy();
                it.remove();
            }
        }
    }

    /** Unwraps {@code envelope}'s data key with one KMS call; zeroes the array the KMS client handed out. */
    private AesKey unwrap(EnvelopeKms kms, Envelope envelope, Path path) throws IOException {
        try {
            EnvelopeWrapping.checkKind(envelope, kms, "read it with " + SealedFileSystem.KMS_CLASS + " set to a client of"
                    + " its kind (docs/sealed-files.md, \"Other KMSs\"). No byte of it was decrypted.");
        } catch (IOException e) {
            throw new IOException((path == null ? "" : path + ": ") + e.getMessage(), e);
        }
        EnvelopeKms.WrappedKey wrapped = EnvelopeWrapping.wrappedKey(envelope);
        byte[] material;
        try {
            count();
            material = kms.unwrap(wrapped);
        } catch (IOException e) {
            throw failed("unwrap the data key of " + (path == null ? "a new file" : path.toString()) + " under",
                    envelope, kms, e);
        } catch (RuntimeException e) {
            throw failed("unwrap the data key of " + (path == null ? "a new file" : path.toString()) + " under",
                    envelope, kms, new IOException(e));
        }
        try {
            return dataKey(material, envelope, path, kms);
        } finally {
            if (material != null) {
                Arrays.fill(material, (byte) 0);
            }
        }
    }

    /** {@code material} as a data key (a copy) if it has the size of one. */
    private static AesKey dataKey(byte[] material, Envelope envelope, Path path, EnvelopeKms kms) throws IOException {
        try {
            return AesKey.copyOf(EnvelopeWrapping.checkedDataKey(material, envelope, kms));
        } catch (IOException e) {
            throw path == null ? e : new IOException(path + ": " + e.getMessage(), e);
        }
    }

    private static String advice(EnvelopeKms kms) {
        String advice = kms.refusalAdvice();
        return advice == null || advice.isEmpty() ? "" : "; " + advice;
    }

    /** A KMS call's failure, naming what was asked, the key and the KMS; a refusal stays an {@link AccessControlException}. */
    private IOException failed(String what, Envelope envelope, EnvelopeKms kms, IOException e) {
        String key = envelope == null ? "'" + keyName + "'" : "'" + envelope.keyName() + "' (version "
                + envelope.versionName() + ")";
        AccessControlException refusal = KmsGeneration.refusal(e);
        if (refusal != null) {
            AccessControlException denied = new AccessControlException("the KMS " + kms.location() + " refused to " + what
                    + " the key " + key + ": " + refusal.getMessage() + advice(kms));
            denied.initCause(e);
            return denied;
        }
        return new IOException("cannot " + what + " the key " + key + " in " + kms.location() + " (" + locationSetting
                + "): " + e + "; check that the KMS is reachable", e);
    }

    /**
     * The configuration of sealpipe's own KMS client: Hadoop's KMS client keeps a queue of wrapped
     * keys that it fills in batches of up to 500 per key (a first request for 150 and a refill in
     * the background), which a writer that needs one data key per few minutes never uses. New
     * data keys come past that queue ({@link KmsGeneration}); where they cannot, the queue is one
     * key: a request for one wrapped key, and one more in the background for the next data key.
     */
    public static Configuration kmsClientConfiguration(Configuration conf) {
        Configuration own = new Configuration(conf);
        own.setInt("hadoop.security.kms.client.encrypted.key.cache.size", 1);
        own.setFloat("hadoop.security.kms.client.encrypted.key.cache.low-watermark", 1f);
        return own;
    }

    /**
     * An extension and the KMS calls running on it: retired when a newer one replaces it or this
     * closes, and closed once retired with no call on it (closing a KMS client stops its threads
     * and, over https, its SSL factory, which a call in progress still needs).
     */
    private static final class Lease {
        final EnvelopeKms kms;
        final long madeAt;
        int calls;       // guarded by the EnvelopeKeys
        boolean retired; // guarded by the EnvelopeKeys

        Lease(EnvelopeKms kms, long madeAt) {
            this.kms = kms;
            this.madeAt = madeAt;
        }
    }

    /**
     * The extension for one KMS call, made again once {@code sealpipe.fs.key.refresh.seconds}
     * have passed (a key rolled by another process is then seen); {@link #release} it after the call.
     */
    private Lease acquire() throws IOException {
        Lease old = null;
        synchronized (this) {
            checkOpen();
            if (lease != null && nanoTime.getAsLong() - lease.madeAt < refreshNanos) {
                lease.calls++;
                return lease;
            }
            if (lease != null) {
                lease.retired = true;
                old = lease.calls == 0 ? lease : null;
                lease = null;
            }
        }
        if (old != null) {
            closeQuietly(old.kms);
        }
        EnvelopeKms made = opener.open();
        Lease mine = new Lease(made, nanoTime.getAsLong());
        mine.calls = 1;
        Lease unused = null;
        synchronized (this) {
            if (closed) {
                unused = mine;
                mine = null;
            } else if (lease == null) {
                lease = mine;
            } else { // another caller made one meanwhile: its, and this one closed
                unused = mine;
                mine = lease;
                mine.calls++;
            }
        }
        if (unused != null) {
            closeQuietly(unused.kms);
        }
        if (mine == null) {
            throw new IOException("the sealed file system was closed: its keys are gone");
        }
        return mine;
    }

    /** Ends a call on {@code held}; closes it if it was retired meanwhile and this was its last call. */
    private void release(Lease held) {
        boolean close;
        synchronized (this) {
            held.calls--;
            close = held.retired && held.calls == 0;
        }
        if (close) {
            closeQuietly(held.kms);
        }
    }

    private static void closeQuietly(EnvelopeKms kms) {
        if (kms == null) {
            return;
        }
        try {
            kms.close();
        } catch (IOException | RuntimeException e) {
            // a KMS client's queue that fails to stop holds nothing of ours
        }
    }

    private synchronized void count() {
        calls++;
    }

    /** The KMS calls made so far (generate and unwrap): for tests. */
    public synchronized long calls() {
        return calls;
    }

    /** How many callers wait for another caller's KMS call (an unwrap of the same data key, a generation): for tests. */
    public synchronized int callersWaitingForUnwrap() {
        return waiting;
    }

    /** The data keys held now (for writing, and for reading), without sweeping: for tests. */
    public synchronized int heldKeys() {
        return (writeKey == null ? 0 : 1) + readKeysKept.size();
    }

    /** How many unwrapped data keys are kept for reading: for tests. */
    public synchronized int keptForReading() {
        dropExpired();
        return readKeysKept.size();
    }

    public String keyName() {
        return keyName;
    }

    public String location() {
        return location;
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("the sealed file system was closed: its keys are gone");
        }
    }

    /** Zeroes every data key kept and closes the provider; waits for no KMS call. */
    @Override
    public void close() {
        Lease retired;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (writeKey != null) {
                writeKey.key.destroy();
                writeKey = null;
            }
            readKeysKept.values().forEach(k -> k.key().destroy());
            readKeysKept.clear();
            retired = lease;
            lease = null;
            if (retired != null) {
                retired.retired = true;
                if (retired.calls > 0) {
                    retired = null; // its last call closes it
                }
            }
        }
        if (retired != null) {
            closeQuietly(retired.kms);
        }
    }

    @Override
    public String toString() {
        return "EnvelopeKeys(" + keyName + " in " + location + ")";
    }
}
