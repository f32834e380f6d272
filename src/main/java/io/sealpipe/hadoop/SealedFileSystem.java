package io.sealpipe.hadoop;

import io.sealpipe.Parallelism;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.hadoop.EnvelopeKeys;
import io.sealpipe.internal.hadoop.SealedKeys;
import io.sealpipe.internal.hadoop.SealedReader;
import io.sealpipe.internal.hadoop.SealedSettings;
import io.sealpipe.internal.sealed.SealedLayout;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.FsStatus;
import org.apache.hadoop.fs.FutureDataInputStreamBuilder;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.impl.PathCapabilitiesSupport;
import org.apache.hadoop.fs.permission.FsAction;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.apache.hadoop.util.functional.FutureIO;

/**
 * A Hadoop {@link FileSystem} that stores every file of another one as one authenticated
 * c2sp.org/chunked-encryption message (Cobblestone-256, docs/FORMAT.md), with no side files:
 * {@code sfile:///tmp/a} is the sealed view of {@code file:///tmp/a}, {@code shdfs://nn:8020/d}
 * of {@code hdfs://nn:8020/d} (the same authority and path, another scheme).
 *
 * <pre>
 * fs.sfile.impl                 = io.sealpipe.hadoop.SealedFileSystem
 * sealpipe.fs.sfile.wraps       = file                       (the scheme it is a view of)
 * sealpipe.fs.key.provider.path = jceks://file/etc/sealpipe/keys.jceks   (any Hadoop KeyProvider)
 * sealpipe.fs.key.name          = data                       (a 256-bit key: hadoop key create data -size 256)
 * sealpipe.fs.key.mode          = direct                     (envelope: data keys the KMS wraps; for a KMS)
 * sealpipe.fs.data.key.write.seconds = 300, .write.files = 10000   (envelope: how long, how many files a data key seals)
 * sealpipe.fs.data.key.read.seconds = 300, .read.keys = 1000       (envelope: unwrapped data keys kept for reading)
 * sealpipe.fs.parallelism       = 1                          (threads per written file)
 * sealpipe.fs.cache.chunks      = 8                          (decrypted 16 KiB chunks kept per open file)
 * sealpipe.fs.key.refresh.seconds = 600                      (how long key versions are kept)
 * sealpipe.fs.key.miss.refresh.seconds = 5                   (at most one read per 5 s for unmatched files)
 * sealpipe.fs.downgrade.syncable.exceptions = false          (true: partial-chunk hflush only flushes)
 * sealpipe.fs.compress         = none                       (snappy: compress new files, see COMPRESS)
 * </pre>
 *
 * <p>What is protected: a file's content, against reading and against any change. Each file has
 * a fresh random salt, from which the message key is derived (so no two files share a key or
 * nonce), and a key commitment that names the key version it was written with: files written
 * before a {@code hadoop key roll} stay readable (the reader takes the version whose commitment
 * matches) and new files use the current version (as of the last time the file system asked
 * the provider: see {@link #KEY_REFRESH_SECONDS}). A read authenticates every chunk it returns
 * bytes from; a modified, truncated, extended or reordered file fails on the chunk concerned
 * with a {@link io.sealpipe.StreamAuthenticationException} naming the path, or, where its stored
 * length is no sealed file's, at {@code open} and in its status with an {@link IOException}
 * saying so (a modified header fails {@code open} as matching no key version). What is not: names,
 * directory structure, sizes (plaintext = stored - 56 - 16 per 16 KiB, see
 * {@link GcmStreams#plaintextLength}), times, owners and permissions pass through as they are;
 * and a whole file can be replaced by another sealed file under the same key (bind files to
 * paths yourself if that matters: a path cannot be bound, since renames must keep files readable).
 *
 * <p>Statuses and listings report the plaintext length, computed from the stored length alone.
 * A file still being written has whatever stored length the wrapped stream has passed on, and a
 * file cut short another: where that is a length a sealed file can have, the file lists with it
 * and reading its end fails as truncated; where it is not, the file lists with the plaintext of
 * its whole sealed chunks and one byte more ({@link #listedLength}), as HDFS lists a file being
 * written, instead of failing its status and its directory's listing. Reading it gives those
 * chunks, each authenticated, and the byte past them fails as truncated, naming the file: a
 * reader of the listed length never takes an unfinished file for a whole one. With compression
 * on, a file whose end does not authenticate or that no key version wrote lists in the same
 * way (a compressed one then fails at open). Renames,
 * deletes, directories, permissions, owners and times pass through unchanged.
 * {@code append}, {@code truncate} and {@code concat} are refused with
 * {@link UnsupportedOperationException} (each would have to re-seal the file's final chunk), and
 * so are {@code hflush}/{@code hsync} except at a 16 KiB boundary (see
 * {@link SealedOutputStream}). Checksums ({@code getFileChecksum}) are not offered: the wrapped
 * system's are of the stored bytes.
 *
 * <p>{@code FileSystem.Statistics} for the sealed scheme count plaintext bytes read and written
 * (Spark's and MapReduce's input and output metrics), and the operations; the wrapped scheme's
 * count the stored bytes.
 *
 * <p>Instances are thread-safe, as Hadoop's are; {@link FileSystem#get} shares one per scheme,
 * authority and user. The wrapped file system is Hadoop's shared instance for its scheme and is
 * not closed with this one. Closing this one destroys its copies of the keys (see {@link #close()}).
 *
 * <p>With {@value #KEY_MODE}{@code =envelope} each new file is sealed under a data key that the
 * KMS generated and wrapped, stored in the file's first 512 bytes (docs/FORMAT.md, "Envelope
 * files"): the KMS's key never leaves it, and a JVM holds only the data keys it made or unwrapped,
 * within their bounds ({@link #DATA_KEY_WRITE_SECONDS}, {@link #DATA_KEY_READ_SECONDS}). Files of
 * the other kind open only with {@link #KEY_MODE_READ_OTHER}: lengths are computed as this file
 * system's mode writes files.
 *
 * <p>Key versions are known by their material, not their names: a key deleted and created again
 * under its name is a new key, and the first read of the provider after the deletion forgets the
 * deleted material ({@value #KEY_REFRESH_SECONDS} sets how often new files read it).
 */
@SuppressWarnings("exports") // Hadoop's types in this API: module-info.java says why they are not "requires transitive"
public class SealedFileSystem extends FileSystem {
    /** The URI of the Hadoop KeyProvider holding the key. */
    public static final String KEY_PROVIDER_PATH = "sealpipe.fs.key.provider.path";
    /** The name of the key in that provider. */
    public static final String KEY_NAME = "sealpipe.fs.key.name";
    /**
     * How new files are keyed: {@code direct} (the default), under the key's own material, which
     * the provider must hand out ({@code GET} on a KMS); or {@code envelope}, under data keys that
     * the KMS generates and unwraps ({@code GENERATE_EEK}, {@code DECRYPT_EEK}), each stored
     * wrapped in the file's first 512 bytes, so that the KMS's key never leaves it: the mode for a
     * KMS. A file system opens files of its own mode, and of the other with
     * {@link #KEY_MODE_READ_OTHER} (docs/sealed-files.md, "Keys in a KMS").
     */
    public static final String KEY_MODE = "sealpipe.fs.key.mode";
    /**
     * Whether files of the other key mode open too (default false): direct-key files in envelope
     * mode, which reads the key's own material from the provider for them, and envelope files in
     * direct mode. Refused by default because statuses and listings compute every file's length
     * as this file system's mode writes files, so the other kind's files list 512 bytes off, and a
     * reader that trusts the listed length (a split) would stop short of a direct-key file's end;
     * and because envelope mode must not fetch the key's material for a stray file. For moving a
     * tree from one mode to the other by reading files whole.
     */
    public static final String KEY_MODE_READ_OTHER = "sealpipe.fs.key.mode.read.other";
    /**
     * The class of the KMS client that wraps and unwraps the data keys of envelope mode, an
     * {@link EnvelopeKms} with a public constructor that takes the Configuration; by default
     * {@link HadoopEnvelopeKms}, the Hadoop KeyProvider at {@link #KEY_PROVIDER_PATH}.
     */
    public static final String KMS_CLASS = "sealpipe.fs.kms.class";
    /**
     * Set by the sealed file system, not by users: the URI of the file system it wraps, in the
     * configuration that its {@link EnvelopeKms} is made with (for per-bucket settings).
     */
    public static final String KMS_BINDING = "sealpipe.fs.kms.binding";
    /** Seconds one data key seals new files in envelope mode (default {@value #DEFAULT_DATA_KEY_WRITE_SECONDS}; 0: one per file). */
    public static final String DATA_KEY_WRITE_SECONDS = "sealpipe.fs.data.key.write.seconds";
    /** The default of {@value #DATA_KEY_WRITE_SECONDS}: five minutes. */
    public static final long DEFAULT_DATA_KEY_WRITE_SECONDS = 300;
    /** Files one data key seals at most in envelope mode (default {@value #DEFAULT_DATA_KEY_WRITE_FILES}; 0: one per file). */
    public static final String DATA_KEY_WRITE_FILES = "sealpipe.fs.data.key.write.files";
    /** The default of {@value #DATA_KEY_WRITE_FILES}. */
    public static final long DEFAULT_DATA_KEY_WRITE_FILES = 10_000;
    /**
     * Seconds an unwrapped data key is kept for opening files after the KMS unwrapped it (default
     * {@value #DEFAULT_DATA_KEY_READ_SECONDS}; 0: none kept, an unwrap per file opened): also how
     * long a revoked {@code DECRYPT_EEK} may go on serving files already seen.
     */
    public static final String DATA_KEY_READ_SECONDS = "sealpipe.fs.data.key.read.seconds";
    /** The default of {@value #DATA_KEY_READ_SECONDS}: five minutes. */
    public static final long DEFAULT_DATA_KEY_READ_SECONDS = 300;
    /** Unwrapped data keys kept at most for opening files (default {@value #DEFAULT_DATA_KEY_READ_KEYS}; 0: none). */
    public static final String DATA_KEY_READ_KEYS = "sealpipe.fs.data.key.read.keys";
    /** The default of {@value #DATA_KEY_READ_KEYS}. */
    public static final int DEFAULT_DATA_KEY_READ_KEYS = 1000;
    /** Threads that seal one written file's chunks (1 to {@link Parallelism#MAX}); default 1. */
    public static final String PARALLELISM = "sealpipe.fs.parallelism";
    /** Decrypted 16 KiB chunks an open file keeps for nearby reads (0 to 64); default 8. */
    public static final String CACHE_CHUNKS = "sealpipe.fs.cache.chunks";
    /**
     * Seconds the key versions read from the provider are kept before the next file created or
     * opened reads them again (default {@value #DEFAULT_KEY_REFRESH_SECONDS}; 0 reads them for
     * every file, except a file opened while another's read is in progress, which a version kept
     * serves); a file whose version is not among them makes the file system read them at once
     * (at most once per {@value #KEY_MISS_REFRESH_SECONDS}). Until the next read, a key deleted
     * (or deleted and created again) in the provider is still used: 0 where keys may be replaced
     * under a running application.
     */
    public static final String KEY_REFRESH_SECONDS = "sealpipe.fs.key.refresh.seconds";
    /** The default of {@value #KEY_REFRESH_SECONDS}: ten minutes. */
    public static final long DEFAULT_KEY_REFRESH_SECONDS = 600;
    /**
     * The fewest seconds between two reads of the key provider made for files that no version
     * kept matches (default {@value #DEFAULT_KEY_MISS_REFRESH_SECONDS}; 0: a read for every such
     * file). The first such file reads the provider at once (a file written under a version
     * rolled since then opens); the others within the interval fail as matching no version
     * without asking it, so that listing a directory of another key's files with
     * {@value #COMPRESS}{@code =snappy} (whose statuses open each file) costs one read, not one
     * per file. A version rolled within the interval after such a read opens once it has passed.
     * A provider that could not be read (a KMS outage) is tried again only once this interval (or
     * {@value #KEY_REFRESH_SECONDS}, if shorter) has passed: until then files open with the
     * versions kept and a create fails at once with that read's failure, instead of each waiting
     * for the KMS client's timeout in turn.
     */
    public static final String KEY_MISS_REFRESH_SECONDS = "sealpipe.fs.key.miss.refresh.seconds";
    /**
     * The default of {@value #KEY_MISS_REFRESH_SECONDS}: five seconds, at most one provider read
     * (a keystore decryption or a KMS call, milliseconds to a fraction of a second) per five
     * seconds of files of other keys, while a version rolled by another process is missed for
     * seconds at most, and only just after such a read: task retries take longer.
     */
    public static final long DEFAULT_KEY_MISS_REFRESH_SECONDS = 5;
    /**
     * Compression inside sealed files: {@code none} (the default) or {@code snappy}; any other
     * value fails the file system's initialisation. With {@code snappy}, new files are compressed
     * before they are sealed (a Snappy framing stream of 64 KiB frames and a frame index, under
     * the message context {@code sealpipe.fs.compress=snappy}: {@code docs/FORMAT.md}); reads
     * decode only the frames they touch; statuses report the uncompressed length, which costs
     * reading each file's header (and a compressed file's last chunk). A file system without it
     * refuses to open compressed files. Needs snappy-java.
     */
    public static final String COMPRESS = "sealpipe.fs.compress";
    /**
     * When true, {@code hflush()} and {@code hsync()} away from a 16 KiB boundary flush the whole
     * chunks written so far (and the wrapped stream) instead of throwing
     * {@link UnsupportedOperationException}, and the first such call in the JVM logs a warning;
     * default false. For writers that call them only before {@code close()}, such as Parquet 1.14
     * and 1.15 (Spark 4.0); never for a log that must survive a crash (HBase, Spark's event log).
     * Named after S3A's {@code fs.s3a.downgrade.syncable.exceptions}.
     */
    public static final String DOWNGRADE_SYNCABLE_EXCEPTIONS = "sealpipe.fs.downgrade.syncable.exceptions";

    /**
     * The counter in an open file's {@code IOStatistics} ({@code in.getIOStatistics()}) of the
     * 16 KiB chunks it decrypted and verified: against the bytes read, what a read pattern costs
     * and what the chunk cache saves.
     */
    public static final String CHUNKS_OPENED = "sealpipe_chunks_opened";

    /**
     * The configuration key naming the scheme that {@code scheme} is a sealed view of.
     *
     * @param scheme a sealed scheme, such as {@code sfile}
     * @return {@code sealpipe.fs.<scheme>.wraps}
     */
    public static String wrapsKey(String scheme) {
        return "sealpipe.fs." + scheme + ".wraps";
    }

    private URI uri;
    private String innerScheme;
    private FileSystem inner;
    private SealedKeys keys;         // the key's own versions: direct-key files
    private EnvelopeKeys envelopes;  // data keys the KMS wraps: envelope files
    private boolean envelopeMode;    // whether new files are envelope files
    private SealedReader.KeyMode readMode; // which files open
    private long prefix;             // the stored bytes before each message, as this mode writes files: 0 or 512
    private int cachedChunks;
    private boolean compress;
    private boolean downgradeSyncable;
    private volatile Path workingDirectory;

    /** The constructor Hadoop calls (then {@link #initialize}). */
    public SealedFileSystem() {
    }

    /**
     * Finds the wrapped file system and the key.
     *
     * @throws IOException if {@code sealpipe.fs.<scheme>.wraps} or the key settings are missing
     *     or wrong, or compression is asked for
     * @throws IllegalArgumentException if a number or flag setting is out of range or malformed
     */
    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        setConf(conf);
        String scheme = name.getScheme();
        if (scheme == null) {
            throw new IOException("a sealed file system needs a URI with a scheme, not " + name);
        }
        innerScheme = conf.getTrimmed(wrapsKey(scheme));
        if (innerScheme == null || innerScheme.isEmpty()) {
            throw new IOException(wrapsKey(scheme) + " is not set: set it to the scheme that " + scheme
                    + ": is a sealed view of (file, hdfs, s3a, abfs, ...)");
        }
        Class<?> innerClass = conf.getClass("fs." + innerScheme + ".impl", null);
        if (innerScheme.equals(scheme) || (innerClass != null && SealedFileSystem.class.isAssignableFrom(innerClass))) {
            throw new IOException(wrapsKey(scheme) + "=" + innerScheme + " is a sealed scheme itself: a sealed view must"
                    + " wrap a plain file system (file, hdfs, s3a, ...)");
        }
        SealedSettings settings = SealedSettings.of(conf);
        compress = settings.compress();
        cachedChunks = settings.cachedChunks();
        try {
            uri = new URI(scheme, name.getAuthority(), "/", null, null);
            inner = FileSystem.get(new URI(innerScheme, name.getAuthority(), "/", null, null), conf);
        } catch (URISyntaxException e) {
            throw new IOException("cannot make the URIs of " + name + " and its wrapped file system: " + e.getMessage(), e);
        }
        downgradeSyncable = settings.downgradeSyncable();
        envelopeMode = settings.envelopeMode();
        readMode = settings.readMode();
        prefix = settings.prefix();
        keys = settings.loadKeys(conf);
        envelopes = settings.loadEnvelopes(conf, inner.getUri());
        workingDirectory = toSealed(inner.getWorkingDirectory());
    }

    @Override
    public String getScheme() {
        return uri.getScheme();
    }

    @Override
    public URI getUri() {
        return uri;
    }

    /**
     * The file system this one is a sealed view of.
     *
     * @return Hadoop's shared instance for the wrapped scheme and this authority
     */
    public FileSystem getWrappedFileSystem() {
        return inner;
    }

    /**
     * Where {@code path}'s stored bytes are in the wrapped file system.
     *
     * @param path a path of this file system, absolute or relative to its working directory
     * @return the same authority and path under the wrapped scheme
     */
    public Path toWrapped(Path path) {
        URI u = makeQualified(path).toUri();
        return new Path(innerScheme, u.getAuthority(), u.getPath());
    }

    /**
     * The sealed view of a path of the wrapped file system: the same authority and path under
     * this scheme ({@link #toWrapped}'s inverse).
     *
     * @param wrapped a qualified path of the wrapped scheme
     * @return the same authority and path under this file system's scheme
     * @throws IllegalArgumentException if {@code wrapped} is of another scheme
     */
    public Path fromWrapped(Path wrapped) {
        String scheme = wrapped.toUri().getScheme();
        if (!innerScheme.equalsIgnoreCase(scheme)) {
            throw new IllegalArgumentException(wrapped + " is not a path of " + innerScheme + ", the scheme that " + uri.getScheme()
                    + " wraps");
        }
        return toSealed(wrapped);
    }

    private Path toSealed(Path wrapped) {
        URI u = wrapped.toUri();
        return new Path(uri.getScheme(), u.getAuthority(), u.getPath());
    }

    /**
     * The wrapped status with this scheme's path and the content's length: the plaintext's, from
     * the stored length alone; with compression on, a compressed file's uncompressed length, read
     * from the end of the file (so each file's status then costs reading its header, and a
     * compressed file's last chunk).
     */
    private FileStatus toSealed(FileStatus stored) throws IOException {
        Path path = toSealed(stored.getPath());
        long length = stored.getLen();
        if (stored.isFile()) {
            length = listedLength(stored.getLen(), prefix);
            if (compress && plaintextLength(stored.getLen(), prefix) >= 0) {
                try {
                    length = contentLength(path, stored);
                } catch (StreamAuthenticationException | SealedKeys.NoVersionMatches
                        | org.apache.hadoop.security.AccessControlException e) {
                    // Unreadable as it is (its end does not authenticate, no key version wrote it,
                    // its envelope is bad or of another key or mode, or this user may not unwrap
                    // its data key): listed as a plain file, whose open or reads fail.
                }
            }
        }
        return new FileStatus(length, stored.isDirectory(), stored.getReplication(), stored.getBlockSize(),
                stored.getModificationTime(), stored.getAccessTime(), stored.getPermission(), stored.getOwner(),
                stored.getGroup(), stored.isSymlink() ? stored.getSymlink() : null, path, stored.hasAcl(),
                stored.isFile() || stored.isEncrypted(), stored.isErasureCoded());
    }

    /**
     * The plaintext length a file of {@code storedLength} stored bytes lists with: a sealed
     * file's ({@link GcmStreams#plaintextLength}), or, for a length no sealed file has (one still
     * being written, or cut short), the plaintext of its whole sealed chunks and one byte more.
     * That byte is past what can be read: a reader of the whole listed length reaches the
     * missing end and fails, and never takes the whole chunks for the whole file (nor a file
     * with none for an empty one). Once closed, the file holds at least the whole chunks.
     *
     * @param storedLength the stored file's length in bytes
     * @return the plaintext length, 0 or more (1 or more for a length no sealed file has)
     */
    public static long listedLength(long storedLength) {
        return listedLength(storedLength, 0);
    }

    /**
     * {@link #listedLength(long)} of a file whose message follows {@code prefix} bytes (an
     * envelope's 512, or 0).
     */
    static long listedLength(long storedLength, long prefix) {
        return SealedLayout.listedLength(storedLength, prefix);
    }

    /** {@link GcmStreams#plaintextLength} of a message after {@code prefix} bytes: -1 for a length no such file has. */
    static long plaintextLength(long storedLength, long prefix) {
        return SealedLayout.plaintextLength(storedLength, prefix);
    }

    /** The stored length of {@code plainLength} bytes in a message after {@code prefix} bytes. */
    static long storedLength(long plainLength, long prefix) {
        return SealedLayout.storedLength(plainLength, prefix);
    }

    /** Opens the file to learn whether it is compressed and, if so, its uncompressed length. */
    private long contentLength(Path path, FileStatus stored) throws IOException {
        FSDataInputStream in = inner.open(stored.getPath());
        try (SealedInputStream content = SealedInputStream.open(path, in, stored.getLen(), keys, envelopes, readMode, 0, true, null)) {
            return content.length();
        }
    }

    /**
     * Opens {@code f}: one status of the stored file from the wrapped file system (one request
     * on an object store, as the wrapped {@code open} makes itself), handed to the wrapped
     * {@code openFile} so that it makes none of its own.
     */
    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return openSealed(f, null, new Configuration(false), Set.of(), bufferSize);
    }

    /**
     * Opens {@code path} with the builder's status and options ({@code openFile()}, as Spark,
     * Parquet and distcp call it), passed on to the wrapped file system's {@code openFile}:
     * <ul>
     * <li>a status, or the {@code fs.option.openfile.length} option, gives the plaintext length,
     * from which the stored length follows (a sealed file's stored length is a function of its
     * plaintext length), so the wrapped file system is asked for no status: opening costs no
     * request beyond the wrapped file system's own. With compression on the plaintext length is
     * the uncompressed one, and the stored status is asked for.</li>
     * <li>the read policy ({@code fs.option.openfile.read.policy}), the wrapped file system's
     * own options (such as S3A's {@code fs.s3a.readahead.range}) and the buffer size pass as
     * they are, mandatory ones as mandatory: the wrapped file system accepts or refuses them;
     * a split's start and end ({@code fs.option.openfile.split.start/end}) are moved to the
     * stored offsets of the chunks that hold them.</li>
     * </ul>
     * A stated length or status that is not the file's fails reading (the file's end does not
     * authenticate, or the stored file ends first), never reads as another file.
     */
    @Override
    protected CompletableFuture<FSDataInputStream> openFileWithOptions(Path path, OpenFileParameters parameters) {
        // As Hadoop's own file systems: a mandatory option that is neither one of Hadoop's standard
        // ones nor the wrapped scheme's own (fs.s3a.*, which the wrapped file system judges) is
        // refused here, before any request; so is a status of another file.
        String wrappedPrefix = "fs." + innerScheme + ".";
        for (String key : parameters.getMandatoryKeys()) {
            if (!STANDARD_OPEN_OPTIONS.contains(key) && !key.startsWith(wrappedPrefix)) {
                throw new IllegalArgumentException("Unknown mandatory key for " + path + ": \"" + key + "\"");
            }
        }
        FileStatus given = parameters.getStatus();
        if (given != null && !given.getPath().getName().equals(path.getName())) {
            throw new IllegalArgumentException("the status given to open " + path + " is of another file: " + given.getPath());
        }
        CompletableFuture<FSDataInputStream> result = new CompletableFuture<>();
        try {
            result.complete(openSealed(path, parameters.getStatus(), parameters.getOptions(), parameters.getMandatoryKeys(),
                    parameters.getBufferSize()));
        } catch (IOException | RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private FSDataInputStream openSealed(Path f, FileStatus given, Configuration options, Set<String> mandatory,
            int bufferSize) throws IOException {
        Path stored = toWrapped(f);
        if (given != null && given.isDirectory()) {
            throw new FileNotFoundException("cannot open " + f + ": it is a directory");
        }
        long plainLength = given != null ? given.getLen() : longOption(options, OPEN_LENGTH);
        FileStatus storedStatus;
        if (!compress && SealedLayout.isStorable(plainLength)) {
            storedStatus = new FileStatus(storedLength(plainLength, prefix), false, 0, 0, 0, stored);
        } else {
            storedStatus = inner.getFileStatus(stored);
        }
        FutureDataInputStreamBuilder builder = inner.openFile(stored).withFileStatus(storedStatus);
        for (Map.Entry<String, String> option : options) {
            String key = option.getKey();
            String value = option.getValue();
            if (key.equals(OPEN_LENGTH)) {
                continue; // the stored status has the stored length
            }
            if (key.equals(OPEN_SPLIT_START)
                    || key.equals(OPEN_SPLIT_END)) {
                long plain = longOption(options, key);
                if (!SealedLayout.isStorable(plain)) {
                    continue; // none, or past any sealed file: the wrapped file system has no use for it
                }
                value = Long.toString(storedOffset(plain, prefix));
            }
            if (mandatory.contains(key)) {
                builder.must(key, value);
            } else {
                builder.opt(key, value);
            }
        }
        if (bufferSize > 0) {
            builder.opt(OPEN_BUFFER_SIZE, bufferSize);
        }
        FSDataInputStream in = FutureIO.awaitFuture(builder.build());
        statistics.incrementReadOps(1);
        return new FSDataInputStream(SealedInputStream.open(makeQualified(f), in, storedStatus.getLen(), keys, envelopes,
                readMode, cachedChunks, compress, statistics));
    }

    /**
     * Hadoop's standard {@code openFile()} options ({@code Options.OpenFileOptions}, which Hadoop
     * 3.3.4, Spark 3.5's, does not have: named here so that the class is not needed).
     */
    private static final String OPEN_LENGTH = "fs.option.openfile.length";
    private static final String OPEN_SPLIT_START = "fs.option.openfile.split.start";
    private static final String OPEN_SPLIT_END = "fs.option.openfile.split.end";
    private static final String OPEN_BUFFER_SIZE = "fs.option.openfile.buffer.size";
    private static final Set<String> STANDARD_OPEN_OPTIONS = Set.of(OPEN_BUFFER_SIZE, "fs.option.openfile.read.policy",
            OPEN_LENGTH, OPEN_SPLIT_START, OPEN_SPLIT_END, "fs.option.openfile.footer.cache");

    /** An option's whole number, written as one (4096) or as a double (4096.0), or -1 if it is absent or neither. */
    private static long longOption(Configuration options, String key) {
        String value = options.getTrimmed(key);
        if (value == null) {
            return -1;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            try {
                double d = Double.parseDouble(value);
                return d >= 0 && d < Long.MAX_VALUE ? (long) d : -1;
            } catch (NumberFormatException notADouble) {
                return -1;
            }
        }
    }

    @Override
    public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize, short replication,
            long blockSize, Progressable progress) throws IOException {
        return sealed(f, () -> inner.create(toWrapped(f), permission, overwrite, bufferSize, replication, blockSize, progress));
    }

    @Override
    public FSDataOutputStream create(Path f, FsPermission permission, EnumSet<CreateFlag> flags, int bufferSize,
            short replication, long blockSize, Progressable progress, org.apache.hadoop.fs.Options.ChecksumOpt checksumOpt)
            throws IOException {
        refuseAppend(f, flags);
        return sealed(f, () -> inner.create(toWrapped(f), permission, flags, bufferSize, replication, blockSize, progress,
                checksumOpt));
    }

    @Override
    public FSDataOutputStream createNonRecursive(Path f, FsPermission permission, EnumSet<CreateFlag> flags, int bufferSize,
            short replication, long blockSize, Progressable progress) throws IOException {
        refuseAppend(f, flags);
        return sealed(f, () -> inner.createNonRecursive(toWrapped(f), permission, flags, bufferSize, replication, blockSize,
                progress));
    }

    /** Creates a file in the wrapped file system. */
    private interface StoredFile {
        FSDataOutputStream create() throws IOException;
    }

    /**
     * A new sealed file over the stored file that {@code stored} creates, under the key's current
     * version: the key is taken first, so that a key problem leaves nothing behind, and its
     * streams are destroyed once the file's stream has what it needs.
     */
    private FSDataOutputStream sealed(Path f, StoredFile stored) throws IOException {
        GcmStreams key;
        byte[] envelope = null;
        if (envelopeMode) {
            EnvelopeKeys.Sealing sealing = envelopes.forWriting(compress, f);
            key = sealing.streams();
            envelope = sealing.envelope().bytes();
        } else {
            key = keys.forWriting(compress);
        }
        try {
            FSDataOutputStream out = stored.create();
            statistics.incrementWriteOps(1);
            try {
                return new FSDataOutputStream(new SealedOutputStream(makeQualified(f), out, envelope, key, compress,
                        downgradeSyncable, keys != null ? keys::isClosed : envelopes::isClosed), statistics);
            } catch (Throwable e) { // an Error too (snappy-java's native library failing to load)
                IOException cleanup = SealedOutputStream.abandon(out); // an object store stores nothing
                if (cleanup != null) {
                    e.addSuppressed(cleanup);
                }
                throw e;
            }
        } finally {
            key.destroy();
        }
    }

    private static void refuseAppend(Path f, EnumSet<CreateFlag> flags) {
        if (flags != null && flags.contains(CreateFlag.APPEND)) {
            throw unsupported("create with APPEND", f);
        }
    }

    private static UnsupportedOperationException unsupported(String operation, Path f) {
        return new UnsupportedOperationException(operation + " of " + f + " is not supported by a sealed file system: a"
                + " sealed file is one authenticated message whose final chunk close() sealed, so it cannot grow, shrink or"
                + " be joined in place; write a new file instead");
    }

    /** Refused: see the class comment. */
    @Override
    public FSDataOutputStream append(Path f, int bufferSize, Progressable progress) {
        throw unsupported("append", f);
    }

    /** Refused: see the class comment. */
    @Override
    public boolean truncate(Path f, long newLength) {
        throw unsupported("truncate", f);
    }

    /** Refused: see the class comment. */
    @Override
    public void concat(Path trg, Path[] psrcs) {
        throw unsupported("concat", trg);
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        statistics.incrementWriteOps(1);
        return inner.rename(toWrapped(src), toWrapped(dst));
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        statistics.incrementWriteOps(1);
        return inner.delete(toWrapped(f), recursive);
    }

    @Override
    public FileStatus[] listStatus(Path f) throws FileNotFoundException, IOException {
        statistics.incrementLargeReadOps(1);
        FileStatus[] stored = inner.listStatus(toWrapped(f));
        FileStatus[] sealed = new FileStatus[stored.length];
        for (int i = 0; i < stored.length; i++) {
            sealed[i] = toSealed(stored[i]);
        }
        return sealed;
    }

    /**
     * The wrapped file system's own listing of the stored files ({@code listFiles}: S3A lists a
     * whole tree in one request per 1,000 objects), each status with its plaintext length and
     * its blocks' plaintext offsets, as {@link #listStatus} and {@link #getFileBlockLocations}
     * give them.
     */
    @Override
    public RemoteIterator<LocatedFileStatus> listFiles(Path f, boolean recursive) throws IOException {
        statistics.incrementLargeReadOps(1);
        RemoteIterator<LocatedFileStatus> stored = inner.listFiles(toWrapped(f), recursive);
        return new RemoteIterator<>() {
            @Override
            public boolean hasNext() throws IOException {
                return stored.hasNext();
            }

            @Override
            public LocatedFileStatus next() throws IOException {
                return toSealed(stored.next());
            }
        };
    }

    private LocatedFileStatus toSealed(LocatedFileStatus stored) throws IOException {
        FileStatus status = toSealed((FileStatus) stored);
        BlockLocation[] blocks = stored.getBlockLocations();
        if (blocks != null && stored.isFile()) {
            long plainLength = status.getLen();
            blocks = plaintextLength(stored.getLen(), prefix) == plainLength || !compress
                    ? toPlaintext(blocks, plainLength, prefix)
                    : scaled(blocks, stored.getLen(), plainLength, 0, plainLength);
        }
        return new LocatedFileStatus(status, blocks);
    }

    /**
     * The stored tree's summary (file and directory counts, space consumed, quotas) with the
     * plaintext length of its files. On a wrapped file system with an object store's calls
     * (S3A's {@code getObjectMetadata} and {@code listFilesAndEmptyDirectories}), the summary
     * costs the requests S3A's own does: one HEAD for a file; for a directory, that HEAD and one
     * flat listing of its files and empty directories, counted as S3A counts (see {@link
     * #summaryOfFlatListing}); the root, the listing alone. (With compression on, a file's
     * length needs its last chunk read as well; with S3A's client-side encryption on, whose
     * objects are longer than their files, there is no HEAD and a file is listed.) Elsewhere it
     * is the wrapped file system's summary, with a file's length from its stored length and a
     * directory's from one listing of its files ({@link #listFiles}, recursive).
     */
    @Override
    public ContentSummary getContentSummary(Path f) throws IOException {
        ObjectStoreCalls objectStore = OBJECT_STORE_CALLS.get(inner.getClass());
        if (objectStore != null) {
            Path wrapped = toWrapped(f);
            ContentSummary file = wrapped.isRoot() || !objectStore.objectLengthIsFileLength(this) ? null
                    : summaryOfObject(wrapped, objectStore);
            return file != null ? file : summaryOfFlatListing(wrapped, objectStore.flatListing());
        }
        ContentSummary stored = inner.getContentSummary(toWrapped(f));
        long length = 0;
        if (stored.getDirectoryCount() == 0 && stored.getFileCount() == 1) { // a file: a directory counts itself
            length = compress ? getFileStatus(f).getLen() : listedLength(stored.getLength(), prefix);
        } else if (stored.getFileCount() > 0) {
            RemoteIterator<LocatedFileStatus> files = listFiles(f, true);
            while (files.hasNext()) {
                length += files.next().getLen();
            }
        }
        // Space and quotas are the stored tree's (what the wrapped file system holds), as is a
        // snapshot's length: only the live files' lengths are the plaintext's.
        ContentSummary.Builder summary = new ContentSummary.Builder().length(length).fileCount(stored.getFileCount())
                .directoryCount(stored.getDirectoryCount()).spaceConsumed(stored.getSpaceConsumed())
                .quota(stored.getQuota()).spaceQuota(stored.getSpaceQuota()).erasureCodingPolicy(stored.getErasureCodingPolicy())
                .snapshotLength(stored.getSnapshotLength()).snapshotFileCount(stored.getSnapshotFileCount())
                .snapshotDirectoryCount(stored.getSnapshotDirectoryCount())
                .snapshotSpaceConsumed(stored.getSnapshotSpaceConsumed());
        for (StorageType type : StorageType.values()) {
            summary.typeQuota(type, stored.getTypeQuota(type)).typeConsumed(type, stored.getTypeConsumed(type));
        }
        return summary.build();
    }

    /**
     * An object store's calls that a summary needs: one flat listing of a tree's files and of the
     * markers of its empty directories, and, where there is one, a HEAD of one object.
     *
     * @param flatListing {@code listFilesAndEmptyDirectories(Path, boolean)}
     * @param head {@code getObjectMetadata(Path)}, or null
     * @param length the method that gives the length on {@code head}'s result, or null
     * @param cseEnabled {@code isCSEEnabled()}, or null
     */
    private record ObjectStoreCalls(Method flatListing, Method head, Method length, Method cseEnabled) {
        /** Whether a HEAD gives a file's stored length: not with S3A's client-side encryption, which pads objects. */
        boolean objectLengthIsFileLength(SealedFileSystem fs) throws IOException {
            return head != null && (cseEnabled == null || Boolean.FALSE.equals(fs.invoke(fs.inner, cseEnabled)));
        }
    }

    /**
     * A wrapped file system's public {@code listFilesAndEmptyDirectories(Path, boolean)} (S3A's,
     * since Hadoop 3.3), with its {@code getObjectMetadata(Path)} and {@code isCSEEnabled()} if
     * it has them, found by name: sealpipe does not depend on hadoop-aws. The metadata is S3
     * SDK 1's {@code ObjectMetadata} (Hadoop 3.3) or SDK 2's {@code HeadObjectResponse} (3.4).
     */
    private static final ClassValue<ObjectStoreCalls> OBJECT_STORE_CALLS = new ClassValue<>() {
        @Override
        protected ObjectStoreCalls computeValue(Class<?> type) {
            Method flatListing = publicMethod(type, "listFilesAndEmptyDirectories", Path.class, boolean.class);
            if (flatListing == null || !RemoteIterator.class.isAssignableFrom(flatListing.getReturnType())) {
                return null;
            }
            Method head = publicMethod(type, "getObjectMetadata", Path.class);
            Method length = head == null ? null : publicMethod(head.getReturnType(), "contentLength");
            if (length == null && head != null) {
                length = publicMethod(head.getReturnType(), "getContentLength");
            }
            if (length == null || (length.getReturnType() != long.class && length.getReturnType() != Long.class)) {
                head = null;
                length = null;
            }
            Method cseEnabled = publicMethod(type, "isCSEEnabled");
            if (cseEnabled != null && cseEnabled.getReturnType() != boolean.class) {
                cseEnabled = null;
            }
            return new ObjectStoreCalls(flatListing, head, length, cseEnabled);
        }
    };

    private static Method publicMethod(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /**
     * The summary of {@code wrapped} if it is an object (a file), from one HEAD request, or null
     * if there is none under that name (a directory, or nothing).
     */
    private ContentSummary summaryOfObject(Path wrapped, ObjectStoreCalls objectStore) throws IOException {
        Object metadata;
        try {
            metadata = invoke(inner, objectStore.head(), wrapped);
        } catch (FileNotFoundException e) {
            return null;
        }
        Object length = metadata == null ? null : invoke(metadata, objectStore.length());
        if (!(length instanceof Number number)) {
            return null; // no length: listed instead
        }
        long stored = number.longValue();
        FileStatus sealed = toSealed(new FileStatus(stored, false, 1, 0, 0, inner.makeQualified(wrapped)));
        return new ContentSummary.Builder().length(sealed.getLen()).fileCount(1).directoryCount(0)
                .spaceConsumed(stored).build();
    }

    /** Calls a method found by name (on the wrapped file system, or on what it returned). */
    private Object invoke(Object target, Method method, Object... arguments) throws IOException {
        try {
            return method.invoke(target, arguments);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IOException(method.getName() + " failed on " + inner.getUri(), cause);
        } catch (IllegalAccessException e) {
            throw new IOException("cannot call " + method + " on " + inner.getUri(), e);
        }
    }

    /**
     * The summary of {@code wrapped} from one flat listing, counted as S3A counts: every file,
     * and every directory under it that holds a file or is an empty directory's marker, once,
     * with the directory itself; a file (one written since the HEAD that did not find it) as
     * itself. The listing is one LIST request for a directory.
     */
    private ContentSummary summaryOfFlatListing(Path wrapped, Method flatListing) throws IOException {
        RemoteIterator<?> entries = (RemoteIterator<?>) invoke(inner, flatListing, wrapped, true);
        Path root = inner.makeQualified(wrapped);
        Set<Path> directories = new HashSet<>();
        boolean isFile = false;
        long length = 0;
        long stored = 0;
        long files = 0;
        while (entries.hasNext()) {
            FileStatus entry = (FileStatus) entries.next();
            if (entry.isDirectory()) {
                addWithParents(directories, root, entry.getPath());
            } else {
                files++;
                stored += entry.getLen();
                length += toSealed(entry).getLen();
                if (entry.getPath().equals(root)) {
                    isFile = true;
                } else {
                    addWithParents(directories, root, entry.getPath().getParent());
                }
            }
        }
        return new ContentSummary.Builder().length(length).fileCount(files)
                .directoryCount(isFile ? 0 : 1 + directories.size()).spaceConsumed(stored).build();
    }

    /** Adds {@code directory} and its parents below {@code root}, stopping at the first one already there. */
    private static void addWithParents(Set<Path> directories, Path root, Path directory) {
        for (Path d = directory; d != null && !d.equals(root) && directories.add(d); d = d.getParent()) {
            // added
        }
    }

    /**
     * Whether the stored file exists, asked of the wrapped file system: no key is needed, so
     * {@code close()}'s delete-on-exit (which Hadoop's shutdown hook runs holding the
     * {@code FileSystem} cache's lock) never waits for the key provider, and a stored file that
     * is no sealed file still exists.
     */
    @Override
    public boolean exists(Path f) throws IOException {
        return inner.exists(toWrapped(f));
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        statistics.incrementReadOps(1);
        return toSealed(inner.getFileStatus(toWrapped(f)));
    }

    @Override
    public boolean mkdirs(Path f, FsPermission permission) throws IOException {
        statistics.incrementWriteOps(1);
        return inner.mkdirs(toWrapped(f), permission);
    }

    @Override
    public void setWorkingDirectory(Path dir) {
        workingDirectory = makeQualified(dir.isAbsolute() ? dir : new Path(workingDirectory, dir));
    }

    @Override
    public Path getWorkingDirectory() {
        return workingDirectory;
    }

    @Override
    public Path getHomeDirectory() {
        return toSealed(inner.getHomeDirectory());
    }

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
        inner.setPermission(toWrapped(p), permission);
    }

    @Override
    public void setOwner(Path p, String username, String groupname) throws IOException {
        inner.setOwner(toWrapped(p), username, groupname);
    }

    @Override
    public void setTimes(Path p, long mtime, long atime) throws IOException {
        inner.setTimes(toWrapped(p), mtime, atime);
    }

    @Override
    public boolean setReplication(Path src, short replication) throws IOException {
        return inner.setReplication(toWrapped(src), replication);
    }

    @Override
    public void access(Path path, FsAction mode) throws IOException {
        inner.access(toWrapped(path), mode);
    }

    @Override
    public long getDefaultBlockSize(Path f) {
        return inner.getDefaultBlockSize(toWrapped(f));
    }

    @Override
    public short getDefaultReplication(Path path) {
        return inner.getDefaultReplication(toWrapped(path));
    }

    @Override
    public FsServerDefaults getServerDefaults(Path p) throws IOException {
        return inner.getServerDefaults(toWrapped(p));
    }

    @Override
    public FsStatus getStatus(Path p) throws IOException {
        return inner.getStatus(toWrapped(p));
    }

    /**
     * The wrapped file system's locations for the stored bytes that hold plaintext
     * {@code [start, start + len)}, with their offsets and lengths turned back into plaintext
     * positions (so that splits made from them cover the plaintext): see {@link #storedRange}
     * and {@link #toPlaintext}.
     */
    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len) throws IOException {
        if (file == null) {
            return null;
        }
        if (start < 0 || len < 0) {
            throw new IllegalArgumentException("invalid start or len: " + start + ", " + len);
        }
        long plainLength = file.getLen();
        if (plainLength <= start) {
            return new BlockLocation[0];
        }
        if (compress) {
            // A compressed file (its length is not its message's plaintext length) has no fixed
            // place for its content in the stored bytes: the locations of the whole stored file,
            // their offsets scaled to the content (a locality hint, as Hadoop uses them).
            FileStatus stored = inner.getFileStatus(toWrapped(file.getPath()));
            if (plaintextLength(stored.getLen(), prefix) != plainLength) {
                BlockLocation[] blocks = inner.getFileBlockLocations(stored, 0, stored.getLen());
                return blocks == null ? null : scaled(blocks, stored.getLen(), plainLength, start, len);
            }
        }
        long[] range = storedRange(start, len, plainLength, prefix);
        // The stored file's status, made from this one (its stored length follows from the
        // plaintext length): the wrapped file system is not asked for it. S3A, like every file
        // system without locality, answers from the status alone; HDFS asks its NameNode for the
        // blocks, as it would for the plain file.
        FileStatus stored = new FileStatus(storedLength(plainLength, prefix), false, file.getReplication(),
                file.getBlockSize(), file.getModificationTime(), toWrapped(file.getPath()));
        BlockLocation[] blocks = inner.getFileBlockLocations(stored, range[0], range[1] - range[0]);
        return blocks == null ? null : toPlaintext(blocks, plainLength, prefix);
    }

    /**
     * Stored blocks with offsets and lengths scaled from {@code storedLength} to
     * {@code plainLength}, back to back to the end, keeping those that meet
     * {@code [start, start + len)}. Changes the blocks given.
     */
    static BlockLocation[] scaled(BlockLocation[] stored, long storedLength, long plainLength, long start, long len) {
        List<BlockLocation> plain = new ArrayList<>(stored.length);
        long end = len >= plainLength - start ? plainLength : start + len;
        for (int i = 0; i < stored.length; i++) {
            BlockLocation block = stored[i];
            long from = (long) ((double) block.getOffset() / storedLength * plainLength);
            long to = i == stored.length - 1 ? plainLength
                    : (long) ((double) (block.getOffset() + block.getLength()) / storedLength * plainLength);
            if (to > from && to > start && (from < end || (len == 0 && from <= start))) {
                block.setOffset(from);
                block.setLength(to - from);
                plain.add(block);
            }
        }
        return plain.toArray(new BlockLocation[0]);
    }

    /**
     * The stored bytes {@code {from, to}} that hold plaintext {@code [start, start + len)} of a
     * file of {@code plainLength} bytes ({@code start < plainLength}): from the start of the chunk
     * holding {@code start} to the end of the chunk holding the range's last byte, its tag
     * included (for {@code len} 0, the chunk holding {@code start}).
     */
    static long[] storedRange(long start, long len, long plainLength) {
        return storedRange(start, len, plainLength, 0);
    }

    /** {@link #storedRange(long, long, long)} of a file whose message follows {@code prefix} bytes. */
    static long[] storedRange(long start, long len, long plainLength, long prefix) {
        long end = len >= plainLength - start ? plainLength : start + len;
        long last = Math.max(start, end - 1);
        long to = Math.min(storedOffset(last, prefix) + SEALED_CHUNK, storedLength(plainLength, prefix));
        return new long[] {storedOffset(start, prefix), to};
    }

    /**
     * The locations of stored blocks as plaintext ones: each block's offset and length become
     * the plaintext its stored bytes hold (a chunk's bytes count where they are, its tag as the
     * chunk's end), so that consecutive blocks stay back to back. A block that holds no plaintext
     * (only the final chunk's tag) is left out. Changes and returns the blocks given.
     */
    static BlockLocation[] toPlaintext(BlockLocation[] stored, long plainLength) {
        return toPlaintext(stored, plainLength, 0);
    }

    /** {@link #toPlaintext(BlockLocation[], long)} of a file whose message follows {@code prefix} bytes. */
    static BlockLocation[] toPlaintext(BlockLocation[] stored, long plainLength, long prefix) {
        List<BlockLocation> plain = new ArrayList<>(stored.length);
        for (BlockLocation block : stored) {
            long from = plainOffset(block.getOffset() - prefix, plainLength);
            long to = plainOffset(block.getOffset() + block.getLength() - prefix, plainLength);
            if (to > from) {
                block.setOffset(from);
                block.setLength(to - from);
                plain.add(block);
            }
        }
        return plain.toArray(new BlockLocation[0]);
    }

    /** Where the chunk holding plaintext byte {@code plain} starts in the stored file. */
    private static long storedOffset(long plain, long prefix) {
        return SealedLayout.storedOffset(plain, prefix);
    }

    /** The plaintext position of stored byte {@code stored} (a tag counts as its chunk's end). */
    private static long plainOffset(long stored, long plainLength) {
        if (stored <= GcmStreams.HEADER_LENGTH) {
            return 0;
        }
        long body = stored - GcmStreams.HEADER_LENGTH;
        return Math.min(plainLength, body / SEALED_CHUNK * CHUNK + Math.min(CHUNK, body % SEALED_CHUNK));
    }

    private static final long CHUNK = SealedLayout.CHUNK;
    private static final long SEALED_CHUNK = SealedLayout.SEALED_CHUNK;

    /** The wrapped file system, so that its delegation tokens are collected for jobs. */
    @Override
    public FileSystem[] getChildFileSystems() {
        return new FileSystem[] {inner};
    }

    @Override
    public boolean hasPathCapability(Path path, String capability) throws IOException {
        switch (PathCapabilitiesSupport.validatePathCapabilityArgs(makeQualified(path), capability)) {
            case CommonPathCapabilities.FS_APPEND:
            case CommonPathCapabilities.FS_CONCAT:
            case CommonPathCapabilities.FS_TRUNCATE:
            case CommonPathCapabilities.FS_CHECKSUMS:
                return false;
            case CommonPathCapabilities.FS_PERMISSIONS:
                return inner.hasPathCapability(toWrapped(path), capability);
            default:
                return super.hasPathCapability(path, capability);
        }
    }

    /**
     * Closes this view and destroys its keys; the wrapped file system stays open. From another
     * thread too (Hadoop's shutdown hook closes every cached file system), and without waiting
     * for the key provider: every {@code create} or {@code open} after this fails with an
     * {@code IOException} before it writes a byte or decrypts one, and a file being written fails
     * at its next write, flush or {@code close()} with an {@code IOException}, left unsealed (no
     * reader accepts it), as HDFS fails the files of a closed client. A file whose
     * {@code close()} had begun is sealed whole.
     */
    @Override
    public void close() throws IOException {
        try {
            super.close();
        } finally {
            if (keys != null) {
                keys.close();
            }
            if (envelopes != null) {
                envelopes.close();
            }
        }
    }

    /** The data keys of envelope files: for tests (their KMS calls). */
    EnvelopeKeys envelopeKeys() {
        return envelopes;
    }

    @Override
    public String toString() {
        return "SealedFileSystem(" + uri + " over " + (inner == null ? innerScheme : inner.getUri()) + ", key "
                + (keys != null ? keys.keyName() : envelopes != null ? envelopes.keyName() : "?") + ")";
    }
}
