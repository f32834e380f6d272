package io.sealpipe.iceberg;

import io.sealpipe.internal.sealed.SealedLayout;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.hadoop.Configurable;
import org.apache.iceberg.io.BulkDeletionFailureException;
import org.apache.iceberg.io.DelegateFileIO;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.StorageCredential;
import org.apache.iceberg.io.SupportsBulkOperations;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.apache.iceberg.io.SupportsStorageCredentials;

/**
 * An Iceberg {@link FileIO} that seals every file it writes, and opens every file it reads, in
 * the stored format of the sealed file system ({@link io.sealpipe.hadoop.SealedFileSystem},
 * docs/FORMAT.md), through another FileIO that stores the bytes: {@code S3FileIO},
 * {@code HadoopFileIO}, {@code ResolvingFileIO}. A table's files written here read through
 * {@code HadoopFileIO} over the sealed file system, and the other way round, under the same key
 * settings. Configured by catalog properties alone:
 *
 * <pre>
 * io-impl                       = io.sealpipe.iceberg.SealedFileIO
 * sealpipe.io-impl              = org.apache.iceberg.aws.s3.S3FileIO   (default org.apache.iceberg.io.ResolvingFileIO)
 * sealpipe.fs.key.provider.path = jceks://file/etc/sealpipe/keys.jceks
 * sealpipe.fs.key.name          = data
 * sealpipe.fs.key.mode          = direct                     (envelope: data keys a KMS wraps; sealpipe.fs.kms.class)
 * s3.endpoint, client.region, ... (every other property goes to the wrapped FileIO unchanged)
 * </pre>
 *
 * <p>The key settings are the sealed file system's own ({@code sealpipe.fs.*}, see
 * {@link io.sealpipe.hadoop.SealedFileSystem}), read from the catalog properties laid over the
 * Hadoop configuration that the engine hands in ({@link #setConf}); direct keys from any Hadoop
 * key provider and envelope keys from any KMS client both work. So this FileIO needs
 * {@code hadoop-common} on the class path, as Spark, Flink and Hive always have it; without it,
 * {@link #initialize} fails saying so. {@code sealpipe.fs.compress=snappy} is refused, and so are
 * compressed sealed files: their length needs a read of their end.
 *
 * <p>What is protected, and what is not, is what the sealed file system says: each file's
 * content, against reading and any change (a read returns no byte that was not authenticated, and
 * fails naming the file); not names, sizes (plaintext = stored - 56 - 16 per 16 KiB, and 512 more
 * for an envelope file) or times, and not the swap of a whole file for another sealed under the
 * same key.
 *
 * <p>Lengths: Iceberg keeps every file's plaintext length in its manifests, and
 * {@link #newInputFile(String, long)} hands the wrapped FileIO the stored length that follows from
 * it, so that {@code S3FileIO} makes no HEAD request, and {@link InputFile#getLength()} answers
 * with no request. Written files report their plaintext position (and so their plaintext length
 * to manifests), as {@code HadoopFileIO} over the sealed file system does. Reads are range reads
 * of whole chunks: a stream's first read fetches the file's header with the data it needs where
 * they are close (a small file whole), a tail read the last chunks (Parquet's footer then reads
 * from them), and a read with no known length reads sequentially. The headers of the last
 * 1,024 files of a known length over 128 KiB stored that it
 * opened are remembered (stored bytes only), so that a file opened again costs no request for
 * its header; a deserialized copy starts with none.
 *
 * <p>A file whose write failed never reads as a shorter file: its message is not sealed, and the
 * wrapped stream is closed (Iceberg's streams cannot be aborted), leaving an object that every
 * reader rejects as truncated. A stream that is never closed is closed by nobody: its wrapped
 * stream stays open, and whatever the wrapped FileIO stored of it by then (the whole chunks
 * flushed, for {@code HadoopFileIO}; nothing, for {@code S3FileIO}, whose uploads complete only
 * on close) lacks the final chunk, so it too reads as truncated, never as a shorter file.
 *
 * <p>Serializable (Java and Kryo), as Spark ships a table's FileIO to its executors: the
 * properties, the credentials and the Hadoop configuration travel, never a key; the keys, the KMS
 * clients and the wrapped FileIO are made again from them on first use. A deserialized copy is
 * rarely closed (Spark does not close the FileIO it ships): it loads its keys on its first use
 * and holds them until it is closed or, with the files and streams it made, becomes unreachable,
 * when a {@link java.lang.ref.Cleaner} destroys them (the wrapped FileIO is then left to its own
 * cleanup). Thread-safe; its streams
 * are for one thread at a time, as Iceberg's are.
 *
 * <p>After {@link #close()}, every call that needs the keys or the wrapped FileIO fails with an
 * {@link IllegalStateException} saying that this SealedFileIO was closed, as the sealed file
 * system does once closed; it never loads the keys again.
 */
@SuppressWarnings("exports") // Iceberg's types in this API: module-info.java says why they are not "requires transitive"
public final class SealedFileIO implements DelegateFileIO, SupportsStorageCredentials, Configurable<Object> {
    private static final long serialVersionUID = 1L;

    /** The catalog property naming the class of the wrapped FileIO. */
    public static final String IO_IMPL = "sealpipe.io-impl";
    /** The default of {@value #IO_IMPL}: Iceberg's FileIO that picks one by the location's scheme. */
    public static final String DEFAULT_IO_IMPL = "org.apache.iceberg.io.ResolvingFileIO";

    /** The catalog properties, as given (a mutable map, as Kryo wants). */
    private HashMap<String, String> properties = new HashMap<>();
    /** The storage credentials given (a REST catalog's), for the wrapped FileIO. */
    private ArrayList<StorageCredential> credentials = new ArrayList<>();
    /** The engine's Hadoop configuration, in Iceberg's SerializableConfiguration; or null. */
    private Serializable conf;
    private transient volatile Opened opened;
    private transient volatile boolean closed;

    /** The wrapped FileIO and the keys, made on first use. */
    private record Opened(FileIO delegate, SealedStorage storage) {}

    /** The constructor Iceberg calls (then {@link #setConf} and {@link #initialize}). */
    public SealedFileIO() {
    }

    /**
     * Keeps the engine's Hadoop configuration, under the catalog properties, for the keys and
     * the wrapped FileIO.
     *
     * @param hadoopConf a Hadoop {@code Configuration}
     */
    @Override
    public void setConf(Object hadoopConf) {
        checkHadoop();
        this.conf = SealedStorage.serializable(hadoopConf);
    }

    /**
     * Reads the settings, loads the keys and makes the wrapped FileIO.
     *
     * @throws IllegalStateException if Hadoop is not on the class path, or this FileIO was closed
     * @throws UncheckedIOException if a key setting is wrong or missing, or the key cannot be read
     * @throws IllegalArgumentException if a setting is malformed or out of range
     */
    @Override
    public void initialize(Map<String, String> props) {
        checkHadoop();
        synchronized (this) {
            checkNotClosed();
            this.properties = new HashMap<>(props);
            Opened old = opened;
            opened = null;
            if (old != null) {
                closeQuietly(old);
            }
            opened = open();
        }
    }

    private static void checkHadoop() {
        if (!hadoopPresent()) {
            throw new IllegalStateException(SealedFileIO.class.getName() + " needs hadoop-common on the class path (its keys"
                    + " come from Hadoop key providers and KMS clients, configured by the sealpipe.fs.* properties): add"
                    + " org.apache.hadoop:hadoop-common, or Spark's, Flink's or Hive's Hadoop, to the class path");
        }
    }

    /** Whether {@code hadoop-common} is on the class path (asked before any class that uses it loads). */
    private static boolean hadoopPresent() {
        try {
            Class.forName("org.apache.hadoop.conf.Configuration", false, SealedFileIO.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private Opened open() {
        SealedStorage storage;
        try {
            storage = SealedStorage.load(properties, conf == null ? null : SealedStorage.configuration(conf));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load the keys of " + SealedFileIO.class.getSimpleName() + ": "
                    + e.getMessage(), e);
        }
        try {
            Map<String, String> wrapped = new HashMap<>(properties);
            String impl = wrapped.remove(IO_IMPL);
            impl = impl == null || impl.isBlank() ? DEFAULT_IO_IMPL : impl.trim();
            if (impl.equals(SealedFileIO.class.getName())) {
                throw new IllegalArgumentException(IO_IMPL + " names " + impl + " itself: set it to the FileIO that"
                        + " stores the sealed bytes (S3FileIO, HadoopFileIO, ResolvingFileIO)");
            }
            Object hadoopConf = SealedStorage.configuration(conf);
            FileIO delegate = credentials.isEmpty() ? CatalogUtil.loadFileIO(impl, wrapped, hadoopConf)
                    : CatalogUtil.loadFileIO(impl, wrapped, hadoopConf, credentials);
            return new Opened(delegate, storage);
        } catch (RuntimeException | Error e) {
            storage.close();
            throw e;
        }
    }

    /** The wrapped FileIO and keys, made again from the properties after deserialization. */
    private Opened opened() {
        Opened o = opened;
        if (o == null) {
            synchronized (this) {
                checkNotClosed();
                o = opened;
                if (o == null) {
                    checkHadoop();
                    o = open();
                    opened = o;
                }
            }
        }
        return o;
    }

    private void checkNotClosed() {
        if (closed) {
            throw new IllegalStateException("this SealedFileIO was closed: its keys are destroyed and its wrapped FileIO"
                    + " closed, and it does not load them again (make a new one, as the catalog does)");
        }
    }

    /**
     * The wrapped FileIO, made on first use.
     *
     * @return the FileIO of class {@value #IO_IMPL}
     * @throws IllegalStateException if this FileIO was closed
     */
    public FileIO delegate() {
        return opened().delegate();
    }

    SealedStorage storage() {
        return opened().storage();
    }

    /**
     * A file to read whose plaintext length is not known: {@link InputFile#getLength()} asks the
     * wrapped FileIO for the stored length (one request on an object store) and converts it;
     * {@link InputFile#newStream()} reads sequentially and needs no length.
     */
    @Override
    public InputFile newInputFile(String path) {
        Opened o = opened();
        return new SealedInputFile(o.storage(), o.delegate().newInputFile(path), -1);
    }

    /**
     * A file to read of {@code length} plaintext bytes (as Iceberg's manifests record them): the
     * wrapped FileIO gets the stored length, so it makes no request for it, and
     * {@link InputFile#getLength()} is {@code length}. A wrong length fails reading (the file's
     * end does not authenticate), never reads as another file.
     */
    @Override
    public InputFile newInputFile(String path, long length) {
        Opened o = opened();
        if (!SealedLayout.isStorable(length)) {
            return new SealedInputFile(o.storage(), o.delegate().newInputFile(path), -1);
        }
        long stored = SealedLayout.storedLength(length, o.storage().prefix());
        return new SealedInputFile(o.storage(), o.delegate().newInputFile(path, stored), length);
    }

    /**
     * A file to write: its stream seals what is written, and {@code close()} seals the file's
     * last chunk; {@code create()} and {@code createOrOverwrite()} are the wrapped FileIO's.
     */
    @Override
    public OutputFile newOutputFile(String path) {
        Opened o = opened();
        return new SealedOutputFile(o.storage(), o.delegate().newOutputFile(path));
    }

    /** Deletes the stored file through the wrapped FileIO. */
    @Override
    public void deleteFile(String path) {
        Opened o = opened();
        o.storage().forgetHeader(path);
        o.delegate().deleteFile(path);
    }

    /** The catalog properties this FileIO was initialized with (its own and the wrapped FileIO's). */
    @Override
    public Map<String, String> properties() {
        return Map.copyOf(properties);
    }

    /**
     * The wrapped FileIO's listing, each file with its plaintext length (computed from its
     * stored length as this FileIO's key mode writes files; a length no sealed file has lists as
     * its whole chunks and one byte, as the sealed file system lists it).
     *
     * @throws UnsupportedOperationException naming the wrapped FileIO's class if it cannot list
     *     (Iceberg's {@code remove_orphan_files} then needs {@code prefix_listing => false})
     */
    @Override
    public Iterable<FileInfo> listPrefix(String prefix) {
        Opened o = opened();
        Iterable<FileInfo> stored = capable(o.delegate(), SupportsPrefixOperations.class, "listPrefix").listPrefix(prefix);
        long before = o.storage().prefix();
        return () -> StreamSupport.stream(stored.spliterator(), false)
                .map(f -> new FileInfo(f.location(), SealedLayout.listedLength(f.size(), before), f.createdAtMillis()))
                .iterator();
    }

    /**
     * Deletes what the wrapped FileIO holds under {@code prefix}.
     *
     * @throws UnsupportedOperationException naming the wrapped FileIO's class if it cannot
     *     delete by prefix
     */
    @Override
    public void deletePrefix(String prefix) {
        Opened o = opened();
        o.storage().forgetHeaders(prefix);
        capable(o.delegate(), SupportsPrefixOperations.class, "deletePrefix").deletePrefix(prefix);
    }

    /**
     * Deletes {@code paths} through the wrapped FileIO's bulk deletion, or, where it has none,
     * one by one through its {@code deleteFile}, on past a failure.
     *
     * @throws BulkDeletionFailureException if some were not deleted: how many (one by one, the
     *     first failure is its cause, and a few more are suppressed)
     */
    @Override
    public void deleteFiles(Iterable<String> paths) throws BulkDeletionFailureException {
        Opened o = opened();
        paths.forEach(o.storage()::forgetHeader);
        FileIO delegate = o.delegate();
        if (delegate instanceof SupportsBulkOperations bulk) {
            bulk.deleteFiles(paths);
            return;
        }
        int failed = 0;
        RuntimeException first = null;
        for (String path : paths) {
            try {
                delegate.deleteFile(path);
            } catch (RuntimeException e) {
                failed++;
                if (first == null) {
                    first = e;
                } else if (first.getSuppressed().length < 10) {
                    first.addSuppressed(e);
                }
            }
        }
        if (failed > 0) {
            BulkDeletionFailureException e = new BulkDeletionFailureException(failed);
            e.initCause(first);
            throw e;
        }
    }

    private static <T> T capable(FileIO delegate, Class<T> capability, String operation) {
        if (!capability.isInstance(delegate)) {
            throw new UnsupportedOperationException(operation + " is not supported: the wrapped FileIO, "
                    + delegate.getClass().getName() + " (" + IO_IMPL + "), does not implement " + capability.getName());
        }
        return capability.cast(delegate);
    }

    /**
     * Kept, and handed to the wrapped FileIO where it takes credentials (made with them if not
     * yet made); under the lock that makes the wrapped FileIO, so that one made meanwhile gets
     * them too.
     *
     * @throws IllegalArgumentException if {@code given} is null, as Iceberg's FileIOs say
     */
    @Override
    public synchronized void setCredentials(List<StorageCredential> given) {
        if (given == null) {
            throw new IllegalArgumentException("Invalid storage credentials: null");
        }
        this.credentials = new ArrayList<>(given);
        Opened o = opened;
        if (o != null && o.delegate() instanceof SupportsStorageCredentials s) {
            s.setCredentials(given);
        }
    }

    /** The wrapped FileIO's credentials where it takes them, else those given. */
    @Override
    public synchronized List<StorageCredential> credentials() {
        Opened o = opened;
        if (o != null && o.delegate() instanceof SupportsStorageCredentials s) {
            return s.credentials();
        }
        return List.copyOf(credentials);
    }

    /**
     * Destroys the keys, closes the KMS clients and the wrapped FileIO, each even if another
     * fails (the first failure is thrown, the other suppressed). Streams already open keep their
     * own key copies until they are closed; files to read or write made before, and every later
     * use, fail saying this FileIO was closed. Idempotent.
     */
    @Override
    public void close() {
        Opened o;
        synchronized (this) {
            closed = true;
            o = opened;
            opened = null;
        }
        if (o != null) {
            RuntimeException failure = closeAll(o);
            if (failure != null) {
                throw failure;
            }
        }
    }

    /** Closes the keys and then the wrapped FileIO, both whatever happens: the first failure, the other suppressed. */
    private static RuntimeException closeAll(Opened o) {
        RuntimeException failure = null;
        try {
            o.storage().close();
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            o.delegate().close();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        return failure;
    }

    private static void closeQuietly(Opened o) {
        closeAll(o); // replaced by a new one: what closing the old one hit does not matter
    }

    @Override
    public String toString() {
        Opened o = opened;
        return "SealedFileIO(" + (o == null ? properties.getOrDefault(IO_IMPL, DEFAULT_IO_IMPL) : o.delegate()) + ")";
    }
}
