package io.sealpipe.internal.hadoop;

import io.sealpipe.PositionedInput;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.Envelope;
import io.sealpipe.internal.sealed.SealedLayout;
import java.io.IOException;
import java.util.Arrays;
import org.apache.hadoop.fs.Path;

/**
 * Opens one sealed file from its first bytes: finds its key (an envelope file's data key, which
 * {@link EnvelopeKeys} unwraps; a direct-key file's key version, which {@link SealedKeys} finds
 * for its header), checks its key mode and commitment, and opens its message. Shared by the
 * sealed file system and the sealed Iceberg FileIO, so that both read the same files in the same
 * way and fail them with the same messages.
 */
public final class SealedReader {
    /** The most stored bytes {@link #open} needs first: an envelope and its message's header. */
    public static final int FIRST_BYTES = Envelope.LENGTH + GcmStreams.HEADER_LENGTH;

    private SealedReader() {
    }

    /**
     * An opened sealed file.
     *
     * @param channel its message's plaintext (the caller closes it)
     * @param base where the message starts in the stored file: after an envelope, or 0
     * @param length the plaintext length as listed ({@link SealedLayout#listedLength})
     * @param compressed whether the content is compressed ({@code sealpipe.fs.compress=snappy})
     */
    public record Opened(GcmSeekableChannel channel, long base, long length, boolean compressed) {}

    /**
     * A reader's key mode: envelope files or direct-key files, and whether the other kind opens
     * too ({@value SealedFileSystem#KEY_MODE_READ_OTHER}).
     */
    public record KeyMode(boolean envelope, boolean readOther) {
        /** Refuses a file of the other kind, before any key is asked for, unless it is read too. */
        public void check(boolean isEnvelope, Path path) throws IOException {
            if (isEnvelope == envelope || readOther) {
                return;
            }
            if (isEnvelope) {
                throw new SealedKeys.NoVersionMatches(path + ": it is an envelope file (its data key wrapped by a KMS),"
                        + " and this file system writes direct-key files: set " + SealedFileSystem.KEY_MODE + "=envelope"
                        + " to read it, or " + SealedFileSystem.KEY_MODE_READ_OTHER + "=true to open it here too (a"
                        + " listing then gives it a length 512 bytes too long). No byte of it was decrypted.");
            }
            throw new SealedKeys.NoVersionMatches(path + ": it does not begin with an envelope, and this file system"
                    + " (" + SealedFileSystem.KEY_MODE + "=envelope) opens envelope files only: it is a direct-key file"
                    + " or no sealed file. " + SealedFileSystem.KEY_MODE_READ_OTHER + "=true opens direct-key files too,"
                    + " reading the key's own material from the provider (a listing then gives them a length 512 bytes"
                    + " too short). No byte of it was decrypted.");
        }

        /** The stored bytes before each message of this mode's files: an envelope's 512, or 0. */
        public long prefix() {
            return envelope ? Envelope.LENGTH : 0;
        }
    }

    /**
     * A sealed file's key, found from its first bytes.
     *
     * @param streams the streams of its message (the caller's: destroy them once the message is open)
     * @param base where the message starts in the stored file: after an envelope, or 0
     * @param compressed whether the content is compressed ({@code sealpipe.fs.compress=snappy})
     */
    public record Key(GcmStreams streams, long base, boolean compressed) {}

    /**
     * Finds the file's key from {@code first}, checking its key mode and its key commitment.
     *
     * @param first the file's first {@code min(storedLength, FIRST_BYTES)} bytes, or more
     * @param storedLength the stored file's length, or -1 if it is not known (then {@code first}
     *     holds all of a shorter file)
     * @param keys the direct-key versions, or null where there is no key provider
     * @param envelopes the envelope keys
     * @throws IOException naming {@code path} if the stored length is shorter than a header, the
     *     file is of the other key mode and {@code mode} does not read it, the envelope is cut
     *     short, corrupt or of an unknown version, no key matches, or the KMS refuses or fails
     */
    public static Key key(Path path, byte[] first, long storedLength, SealedKeys keys, EnvelopeKeys envelopes,
            KeyMode mode) throws IOException {
        long known = storedLength >= 0 ? storedLength : first.length;
        if (known < GcmStreams.HEADER_LENGTH) {
            throw new IOException(path + ": its stored length, " + known + " bytes, is shorter than a sealed"
                    + " file's header (56 bytes; a whole sealed file has at least 72): it is still being written, was cut"
                    + " short, or was written without sealpipe");
        }
        boolean isEnvelope = Envelope.startsWithMagic(first);
        mode.check(isEnvelope, path);
        if (!isEnvelope) {
            if (keys == null) {
                throw new SealedKeys.NoVersionMatches(path + ": it is a direct-key file (it has no envelope), and this"
                        + " file system's key is in " + envelopes.location() + ", which wraps data keys only: read it"
                        + " with " + SealedFileSystem.KEY_PROVIDER_PATH + " set to the key provider that holds its key."
                        + " No byte of it was decrypted.");
            }
            SealedKeys.Match match = keys.forReading(Arrays.copyOf(first, GcmStreams.HEADER_LENGTH), path);
            return new Key(match.streams(), 0, match.compressed());
        }
        if (known < FIRST_BYTES) {
            throw new IOException(path + ": it begins with an envelope but is " + known + " bytes long, shorter"
                    + " than an envelope and a message header (" + FIRST_BYTES
                    + " bytes): it was cut short or is still being written. No byte of it was decrypted.");
        }
        Envelope envelope;
        try {
            envelope = Envelope.parse(first);
        } catch (IOException e) {
            IOException unreadable = new SealedKeys.NoVersionMatches(path + ": its envelope cannot be read: "
                    + e.getMessage() + " (key '" + envelopes.keyName() + "' in " + envelopes.location()
                    + "). No byte of it was decrypted.");
            unreadable.initCause(e);
            throw unreadable;
        }
        GcmStreams streams = envelopes.forReading(envelope, path);
        if (!streams.matchesHeader(Arrays.copyOfRange(first, Envelope.LENGTH, FIRST_BYTES))) {
            streams.destroy();
            throw new SealedKeys.NoVersionMatches(path + ": the data key in its envelope (key '"
                    + envelope.keyName() + "', version " + envelope.versionName() + ", in "
                    + envelopes.location() + ") does not match the file's key commitment: the envelope or the"
                    + " header was changed, or the envelope belongs to another file. No byte of it was decrypted.");
        }
        return new Key(streams, Envelope.LENGTH, envelope.compressed());
    }

    /**
     * Finds the file's key from {@code first} ({@link #key}) and opens its message over
     * {@code stored}. A file whose stored length no sealed file has (still being written, or cut
     * short) opens with its listed length: reading past its whole chunks fails as truncated,
     * never as the end.
     *
     * @param first the file's first {@code min(storedLength, FIRST_BYTES)} bytes, or more
     * @param stored the stored file's bytes, addressed from its first byte; its first
     *     sequential read of the message's header is served from {@code first}
     * @throws IOException as {@link #key} does, or if reading fails
     */
    public static Opened open(Path path, byte[] first, long storedLength, PositionedInput stored, SealedKeys keys,
            EnvelopeKeys envelopes, KeyMode mode, int cachedChunks) throws IOException {
        Key key = key(path, first, storedLength, keys, envelopes, mode);
        long base = key.base();
        long length = SealedLayout.listedLength(storedLength, base); // whole chunks and one byte, if unfinished
        GcmSeekableChannel channel;
        try {
            channel = key.streams().open(new Message(stored, base, Arrays.copyOfRange(first, (int) base,
                    (int) base + GcmStreams.HEADER_LENGTH)), storedLength - base, cachedChunks);
        } finally {
            key.streams().destroy(); // the channel keeps what it needs
        }
        return new Opened(channel, base, length, key.compressed());
    }

    /**
     * The message in the stored bytes, after {@code base}. The header, read once already to find
     * the key, is handed to the channel's first read from here: reading it again would cost an
     * object store a request.
     */
    private static final class Message implements PositionedInput {
        private final PositionedInput stored;
        private final long base;
        private byte[] header; // until the channel's first read takes it

        Message(PositionedInput stored, long base, byte[] header) {
            this.stored = stored;
            this.base = base;
            this.header = header;
        }

        @Override
        public int read(long position, byte[] buffer, int offset, int length) throws IOException {
            return stored.read(base + position, buffer, offset, length);
        }

        @Override
        public int readSequentially(long position, byte[] buffer, int offset, int length) throws IOException {
            byte[] h = header;
            header = null;
            if (h != null && position == 0 && length <= h.length) {
                System.arraycopy(h, 0, buffer, offset, length);
                return length;
            }
            return stored.readSequentially(base + position, buffer, offset, length);
        }
    }
}
