package io.sealpipe.iceberg;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.Cleaners;
import io.sealpipe.internal.hadoop.EnvelopeKeys;
import io.sealpipe.internal.hadoop.SealedKeys;
import io.sealpipe.internal.hadoop.SealedReader;
import io.sealpipe.internal.hadoop.SealedSettings;
import java.io.Closeable;
import java.io.IOException;
import java.io.Serializable;
import java.lang.ref.Cleaner;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.hadoop.SerializableConfiguration;

/**
 * The Hadoop side of a {@link SealedFileIO}: its settings and keys, read from the catalog
 * properties laid over the Hadoop configuration, as the sealed file system reads them. Only
 * this class (and the streams it opens) touches Hadoop's types, so that {@link SealedFileIO}
 * loads without Hadoop and says what is missing.
 */
final class SealedStorage implements Closeable {
    final SealedSettings settings;
    final SealedKeys keys; // null in envelope mode under a KMS that is no key provider
    final EnvelopeKeys envelopes;
    /** The most headers {@link #header} remembers (each at most 568 bytes and its location). */
    static final int HEADERS_REMEMBERED = 1024;

    private volatile boolean closed;
    /**
     * The first stored bytes (the header, and the envelope with its wrapped data key in envelope
     * mode) of files read by position, by location, with the stored length they were read at,
     * the least recently used forgotten first: a file opened again (Iceberg opens a data file for
     * each task that reads part of it, and reads its footer each time) needs no request for
     * them. Stored bytes only, no key.
     */
    private final Map<String, Remembered> headers = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Remembered> eldest) {
            return size() > HEADERS_REMEMBERED;
        }
    };

    private record Remembered(long storedLength, byte[] first) {}
    /**
     * Destroys the keys, once: by {@link #close()}, or once nothing uses them (no FileIO, file
     * or stream holds this storage), for a deserialized FileIO that nobody closes.
     */
    private final Cleaner.Cleanable destroyKeys;

    private SealedStorage(SealedSettings settings, SealedKeys keys, EnvelopeKeys envelopes) {
        this.settings = settings;
        this.keys = keys;
        this.envelopes = envelopes;
        this.destroyKeys = Cleaners.CLEANER.register(this, () -> destroy(keys, envelopes)); // holds no "this"
    }

    /** A Hadoop configuration made serializable (Iceberg's wrapper), or null for none. */
    static Serializable serializable(Object conf) {
        return conf instanceof Configuration c ? new SerializableConfiguration(c) : null;
    }

    /** The configuration {@link #serializable} kept, or a new default one. */
    static Object configuration(Serializable kept) {
        Configuration c = kept instanceof SerializableConfiguration s ? s.get() : null;
        return c != null ? c : new Configuration(); // null: serialized by a serializer that skips its transient field
    }

    /**
     * Reads the settings from {@code properties} over {@code conf} and loads the keys.
     *
     * @throws IOException if a setting is wrong or missing, compression is asked for, or the key
     *     cannot be read
     */
    static SealedStorage load(Map<String, String> properties, Object conf) throws IOException {
        Configuration c = conf instanceof Configuration given ? new Configuration(given) : new Configuration();
        properties.forEach(c::set);
        SealedSettings settings = SealedSettings.of(c);
        if (settings.compress()) {
            throw new IOException(SealedFileSystem.COMPRESS + "=snappy is not supported by " + SealedFileIO.class.getName()
                    + ": a compressed sealed file's length needs a read of its end, and Iceberg must know every file's"
                    + " length with no request. Remove the setting from the catalog properties (and from the Hadoop"
                    + " configuration), or use the sealed file system through HadoopFileIO");
        }
        SealedKeys keys = settings.loadKeys(c);
        try {
            return new SealedStorage(settings, keys, settings.loadEnvelopes(c, null));
        } catch (IOException | RuntimeException | Error e) {
            if (keys != null) {
                keys.close();
            }
            throw e;
        }
    }

    /** A new file's key: its envelope (null for a direct-key file) and streams (the caller destroys them). */
    record Sealing(byte[] envelope, GcmStreams streams) {}

    Sealing forWriting(String location) throws IOException {
        checkOpen(location);
        try {
            if (!settings.envelopeMode()) {
                return new Sealing(null, keys.forWriting(false));
            }
            EnvelopeKeys.Sealing sealing = envelopes.forWriting(false, location);
            return new Sealing(sealing.envelope().bytes(), sealing.streams());
        } catch (IOException e) {
            throw closedMeanwhile(location, e);
        }
    }

    /**
     * The keys' own message after close speaks of the sealed file system, which they serve too:
     * here it is a FileIO that was closed.
     */
    private void checkOpen(String location) throws IOException {
        if (closed) {
            throw new IOException(location + ": this " + SealedFileIO.class.getSimpleName() + " was closed: its keys"
                    + " are destroyed (a file to read or write made before the close cannot be opened after it)");
        }
    }

    /** {@code e}, or, where the keys failed because this storage was closed meanwhile, the message that says so. */
    private IOException closedMeanwhile(String location, IOException e) {
        try {
            checkOpen(location);
        } catch (IOException closedNow) {
            closedNow.addSuppressed(e);
            return closedNow;
        }
        return e;
    }

    /**
     * The first stored bytes remembered for the file at {@code location} of {@code storedLength}
     * stored bytes (a copy), or null. A file replaced since by another of the same stored length,
     * other than through this FileIO, then fails to authenticate and is {@link #forgetHeader
     * forgotten}: Iceberg never replaces a file it knows the length of.
     */
    byte[] header(String location, long storedLength) {
        synchronized (headers) {
            Remembered r = headers.get(location);
            return r == null || r.storedLength() != storedLength ? null : r.first().clone();
        }
    }

    /** Remembers the first bytes of a file that opened with them (its key found, its header committed). */
    void rememberHeader(String location, long storedLength, byte[] first) {
        synchronized (headers) {
            if (!closed) {
                headers.put(location, new Remembered(storedLength, first.clone()));
            }
        }
    }

    /** Forgets the first bytes of the file at {@code location}: written, deleted, or failed. */
    void forgetHeader(String location) {
        synchronized (headers) {
            headers.remove(location);
        }
    }

    /** Forgets the first bytes of every file under {@code prefix} (deleted). */
    void forgetHeaders(String prefix) {
        synchronized (headers) {
            headers.keySet().removeIf(location -> location.startsWith(prefix));
        }
    }

    /** The stored bytes before each message, as this mode writes files: 0 or 512. */
    long prefix() {
        return settings.prefix();
    }

    /** {@link SealedReader#key} for a file of this storage. */
    SealedReader.Key key(String location, byte[] first, long storedLength) throws IOException {
        checkOpen(location);
        try {
            return SealedReader.key(path(location), first, storedLength, keys, envelopes, settings.readMode());
        } catch (IOException e) {
            throw closedMeanwhile(location, e);
        }
    }

    /** {@link SealedReader#open} for a file of this storage. */
    SealedReader.Opened open(String location, byte[] first, long storedLength, io.sealpipe.PositionedInput stored)
            throws IOException {
        checkOpen(location);
        try {
            return SealedReader.open(path(location), first, storedLength, stored, keys, envelopes, settings.readMode(),
                    settings.cachedChunks());
        } catch (IOException e) {
            throw closedMeanwhile(location, e);
        }
    }

    /**
     * The location as a Hadoop path, which the keys name in their messages: parsed, or, where
     * Hadoop cannot parse it, the whole location as the path (it prints as it is).
     */
    private static Path path(String location) {
        try {
            return new Path(location);
        } catch (IllegalArgumentException e) {
            try {
                return new Path(new java.net.URI(null, null, location, null));
            } catch (java.net.URISyntaxException | IllegalArgumentException notEvenThat) {
                return new Path("/unparseable-location");
            }
        }
    }

    /** Destroys the keys and closes the KMS clients (once). */
    @Override
    public void close() {
        closed = true;
        synchronized (headers) {
            headers.clear();
        }
        destroyKeys.clean();
    }

    private static void destroy(SealedKeys keys, EnvelopeKeys envelopes) {
        try {
            if (keys != null) {
                keys.close();
            }
        } finally {
            envelopes.close();
        }
    }
}
