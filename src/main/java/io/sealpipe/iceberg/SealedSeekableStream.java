package io.sealpipe.iceberg;

import io.sealpipe.PositionedInput;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmInputStream;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.internal.hadoop.SealedReader;
import io.sealpipe.internal.sealed.SealedLayout;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;
import org.apache.iceberg.io.FileRange;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * The plaintext of one sealed file, over the wrapped FileIO's stream of its stored bytes. Every
 * byte it returns was authenticated; a chunk that fails gives a {@link StreamAuthenticationException}
 * naming the file and the chunk, and every later read fails too.
 *
 * <p>Requests: the file is opened at the first read, which knows what it needs. A read with no
 * known length (Iceberg's metadata files) reads sequentially from the start, through the wrapped
 * stream's own reads (one request for the run). Otherwise the header (56 bytes, 568 for an
 * envelope file) is fetched with the first range where that starts within {@value #MERGE_GAP}
 * bytes of it (or, for a file of a known length this FileIO read before, taken from what it read
 * then: {@link SealedStorage#header}), and a file of at most {@value #WHOLE_OBJECT} stored bytes
 * is fetched whole;
 * {@link #readFully(long, byte[], int, int)} fetches the whole chunks of its range at once (the
 * wrapped stream's range read where it has one); {@link #readTail} fetches the last
 * {@value #TAIL_BYTES} bytes' chunks, which are kept, so that a footer read after it needs no
 * request; {@link #read()} and {@link #read(byte[], int, int)} after a {@link #seek} read on
 * sequentially from there.
 */
final class SealedSeekableStream extends SeekableInputStream implements RangeReadable {
    /** Stored files up to this size are fetched whole at their first read. */
    static final int WHOLE_OBJECT = 128 * 1024;
    /** A first range that starts this close to the header is fetched with it. */
    static final int MERGE_GAP = 64 * 1024;
    /**
     * The plaintext bytes at the end whose chunks a tail read fetches: a Parquet footer of up to
     * about this size then reads from them, with no request of its own.
     */
    static final int TAIL_BYTES = 16 * 1024;
    /** Fetched stored bytes kept for later reads up to this size; larger fetches are dropped once read. */
    private static final int KEEP_FETCHED = 1024 * 1024;
    /** The most stored bytes fetched at once. */
    private static final int MAX_FETCH = 512 * SealedLayout.SEALED_CHUNK;
    /**
     * The most stored bytes one range read fetches: a larger one (over 2 GiB would not fit an
     * array) fetches its first {@value #MAX_FETCH} bytes, and the reads go on in pieces that size.
     */
    private static final int MAX_ONE_FETCH = 1 << 30;

    private final SealedInputFile file;
    private final SealedStorage storage;
    private final SeekableInputStream in;
    private final RangeReadable ranges; // in, where it reads ranges; else null
    private final Stored stored = new Stored();
    private byte[] first; // the stored file's first bytes, once read
    private boolean headerRemembered; // first is what an earlier stream of the FileIO read
    private GcmInputStream sequential; // reading with no known length
    private long sequentialPos;
    private GcmSeekableChannel channel; // reading by position
    private long length = -1; // plaintext, once the channel is open
    private long storedLength = -1;
    private long pos;
    private IOException failure; // an authentication failure: every later read fails with it
    private boolean closed;

    SealedSeekableStream(SealedInputFile file, SealedStorage storage, SeekableInputStream in) {
        this.file = file;
        this.storage = storage;
        this.in = in;
        this.ranges = in instanceof RangeReadable r ? r : null;
    }

    /** The stored bytes, for the channel: fetched ranges first, else the wrapped stream. */
    private final class Stored implements PositionedInput {
        private byte[] fetched; // stored bytes [fetchedAt, fetchedAt + fetched.length)
        private long fetchedAt;
        private long planEnd; // where the read in progress needs stored bytes up to

        boolean covers(long from, long to) {
            return fetched != null && from >= fetchedAt && to <= fetchedAt + fetched.length;
        }

        /** Fetches stored {@code [from, to)} in one range read, unless it is fetched already. */
        void fetch(long from, long to) throws IOException {
            to = Math.min(to, storedLength);
            if (from >= to || covers(from, to)) {
                return;
            }
            if (to - from > MAX_ONE_FETCH) {
                to = from + MAX_FETCH;
            }
            byte[] b = new byte[(int) (to - from)];
            try {
                if (ranges != null) {
                    ranges.readFully(from, b, 0, b.length);
                } else {
                    in.seek(from);
                    readFully(in, b, 0, b.length);
                }
            } catch (EOFException e) {
                throw endsBefore(to, e);
            }
            fetched = b;
            fetchedAt = from;
        }

        /** Drops a large fetch once the read that needed it is done. */
        void done() {
            planEnd = 0;
            if (fetched != null && fetched.length > KEEP_FETCHED) {
                fetched = null;
            }
        }

        @Override
        public int read(long position, byte[] buffer, int offset, int len) throws IOException {
            if (position >= storedLength) {
                return -1;
            }
            if (!covers(position, position + 1)) {
                long to = Math.max(position + len, planEnd);
                fetch(position, Math.min(to, position + Math.max(len, MAX_FETCH)));
            }
            int n = (int) Math.min(len, fetchedAt + fetched.length - position);
            System.arraycopy(fetched, (int) (position - fetchedAt), buffer, offset, n);
            return n;
        }

        @Override
        public int readSequentially(long position, byte[] buffer, int offset, int len) throws IOException {
            if (covers(position, position + 1)) {
                return read(position, buffer, offset, len);
            }
            if (in.getPos() != position) {
                in.seek(position);
            }
            return in.read(buffer, offset, len);
        }
    }

    /** The stored file ends before stored byte {@code to}: where, and the likely causes. */
    private EOFException endsBefore(long to, EOFException cause) {
        EOFException shorter = new EOFException(file.location() + ": the stored file ends before byte " + to
                + ", which its length needs (" + storedLength + " stored bytes" + (file.lengthKnown() ? " for "
                + file.getLength() + " plaintext bytes, the length given" : "") + "): it was cut short, is still being"
                + " written, was not written by sealpipe, or the length given is not its own. No byte of it was returned.");
        shorter.initCause(cause);
        return shorter;
    }

    private static void readFully(InputStream from, byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            int n = from.read(b, off, len);
            if (n < 0) {
                throw new EOFException("the stored file ends " + len + " bytes early");
            }
            off += n;
            len -= n;
        }
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException(file.location() + ": the stream is closed");
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Records an authentication failure (every later read fails with it); names the file in
     * every failure whose message does not already (of the same class where that is a common one).
     */
    private IOException failed(IOException e) {
        if (headerRemembered || e instanceof StreamAuthenticationException) {
            storage.forgetHeader(file.location()); // whether remembered or read now: the next read reads it again
        }
        if (e instanceof StreamAuthenticationException a) {
            failure = headerRemembered ? a.in(file.location() + " (with its header as an earlier read through this"
                    + " FileIO found it: if the file was replaced since, read it again, which reads its header from"
                    + " the file)") : a.in(file.location());
            return failure;
        }
        String message = e.getMessage();
        if (message != null && message.contains(file.location())) {
            return e;
        }
        String named = file.location() + ": " + (message == null ? e.getClass().getName() : message);
        IOException n;
        if (e instanceof EOFException) {
            n = new EOFException(named);
        } else if (e instanceof java.io.FileNotFoundException) {
            n = new java.io.FileNotFoundException(named);
        } else if (e instanceof java.io.InterruptedIOException) {
            n = new java.io.InterruptedIOException(named);
        } else {
            return new IOException(named, e);
        }
        n.initCause(e);
        return n;
    }

    /**
     * Opens the channel, fetching the header with stored {@code [from, to)} where that is
     * close to it, or the whole file where it is small; for a read that goes on sequentially
     * from the start ({@code from} 0 and {@code to} -1), with the wrapped stream's own reads,
     * which then go on with the content.
     */
    private void openChannel(long from, long to) throws IOException {
        if (channel != null) {
            return;
        }
        storedLength = file.storedLength();
        if (storedLength < GcmStreams.HEADER_LENGTH) { // no header to fetch: the keys say why, naming the file
            storage.key(file.location(), new byte[0], storedLength);
            throw new IOException(file.location() + ": " + storedLength + " stored bytes, shorter than a header");
        }
        if (first == null) {
            int head = (int) Math.min(storedLength, SealedReader.FIRST_BYTES);
            if (from == 0 && to < 0 && storedLength > WHOLE_OBJECT) {
                byte[] b = new byte[head];
                in.seek(0);
                try {
                    readFully(in, b, 0, head);
                } catch (EOFException shorter) {
                    throw whyShorter(endsBefore(head, shorter), head);
                }
                first = b; // only once read whole: a retry reads it again
                stored.fetched = first; // the channel's first reads take what was read past the header
                stored.fetchedAt = 0;
            } else {
                long end = storedLength <= WHOLE_OBJECT ? storedLength
                        : from >= 0 && from <= MERGE_GAP ? Math.max(to, head) : head;
                // A file of a known length (Iceberg's data and delete files, which it never
                // replaces) opened before by this FileIO: its header as read then.
                first = remembers() && end == head ? storage.header(file.location(), storedLength) : null;
                headerRemembered = first != null;
                if (first == null) {
                    try {
                        stored.fetch(0, end);
                    } catch (EOFException shorter) {
                        throw whyShorter(shorter, head);
                    }
                    first = Arrays.copyOf(stored.fetched, head);
                }
            }
        }
        SealedReader.Opened opened = storage.open(file.location(), first, storedLength, stored);
        if (opened.compressed()) {
            opened.channel().close();
            throw compressed();
        }
        if (remembers() && !headerRemembered) { // opened: its key found, its header committed
            storage.rememberHeader(file.location(), storedLength, first);
        }
        channel = opened.channel();
        length = opened.length();
        if (sequential != null) {
            sequential.close();
            sequential = null;
        }
    }

    /**
     * Whether this file's header is remembered for later opens: a file of a known length (Iceberg's
     * data and delete files, which it never replaces) too large to be fetched whole.
     */
    private boolean remembers() {
        return file.lengthKnown() && storedLength > WHOLE_OBJECT;
    }

    /**
     * The stored file is shorter than its length says: its header, where there is one, may say
     * why (another key mode's file, another key's, or no sealed file), at the cost of one more
     * request; else {@code shorter} says it.
     */
    private IOException whyShorter(EOFException shorter, int head) {
        try {
            stored.fetch(0, head);
            storage.key(file.location(), Arrays.copyOf(stored.fetched, head), -1).streams().destroy();
        } catch (IOException | RuntimeException e) {
            if (!(e instanceof EOFException)) {
                e.addSuppressed(shorter);
                return e instanceof IOException io ? io : new IOException(e.getMessage(), e);
            }
        }
        return shorter;
    }

    private IOException compressed() {
        return new IOException(file.location() + " was written compressed (sealpipe.fs.compress=snappy), which "
                + SealedFileIO.class.getSimpleName() + " does not read (a compressed file's length needs a read of its"
                + " end): read it through HadoopFileIO over the sealed file system with that setting");
    }

    /** The stored bytes of the chunks that hold plaintext {@code [position, position + len)}. */
    private long[] storedRange(long position, long len) {
        long prefix = storage.prefix();
        long from = SealedLayout.storedOffset(position, prefix);
        long to = SealedLayout.storedOffset(position + Math.max(len, 1) - 1, prefix) + SealedLayout.SEALED_CHUNK;
        return new long[] {from, to};
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int len) throws IOException {
        checkOpen();
        if (position < 0 || len < 0 || offset < 0 || offset + len > buffer.length) {
            throw new IndexOutOfBoundsException("position " + position + ", offset " + offset + ", length " + len
                    + " in a buffer of " + buffer.length);
        }
        long[] range = storedRange(position, len);
        try {
            openChannel(range[0], range[1]);
            if (position + len > length) {
                throw new EOFException(file.location() + ": a read of " + len + " bytes at " + position
                        + " ends past the end of the file, " + length + " bytes");
            }
            stored.planEnd = range[1];
            channel.readFully(position, buffer, offset, len);
        } catch (IOException e) {
            throw failed(e);
        } finally {
            stored.done();
        }
    }

    @Override
    public int readTail(byte[] buffer, int offset, int len) throws IOException {
        checkOpen();
        try {
            long plain = file.lengthKnown() ? file.getLength() : -1;
            if (plain >= 0) {
                long[] tail = storedRange(Math.max(0, plain - Math.max(len, TAIL_BYTES)), Math.max(len, TAIL_BYTES));
                openChannel(tail[0], Long.MAX_VALUE);
                stored.fetch(tail[0], storedLength); // to the end: the final chunk too, however short
            } else {
                openChannel(-1, -1);
            }
            int n = (int) Math.min(len, length);
            channel.readFully(length - n, buffer, offset, n);
            return n;
        } catch (IOException e) {
            throw failed(e);
        } finally {
            stored.done();
        }
    }

    /**
     * Reads the ranges: the chunks of ranges that share or adjoin chunks are fetched at once (up
     * to {@value #MAX_FETCH} stored bytes), each chunk decrypted once; a range that fails (a
     * chunk that does not authenticate, or past the end) fails alone. Every range's future
     * completes, whatever fails: a failed fetch, or anything unexpected, fails the ranges not read.
     */
    @Override
    public void readVectored(List<FileRange> fileRanges, IntFunction<ByteBuffer> allocate) throws IOException {
        try {
            checkOpen();
        } catch (IOException e) {
            fileRanges.forEach(r -> r.byteBuffer().completeExceptionally(e));
            throw e;
        }
        try {
            readSorted(RangeReadable.sortRanges(fileRanges), allocate);
        } catch (RuntimeException | Error e) { // every future completes: a caller waiting on one never hangs
            fileRanges.forEach(r -> r.byteBuffer().completeExceptionally(e));
            stored.done();
            if (e instanceof Error) {
                throw e;
            }
        }
    }

    private void readSorted(List<FileRange> sorted, IntFunction<ByteBuffer> allocate) {
        int i = 0;
        while (i < sorted.size()) {
            long[] span = storedRange(sorted.get(i).offset(), sorted.get(i).length());
            int j = i + 1;
            while (j < sorted.size()) {
                long[] next = storedRange(sorted.get(j).offset(), sorted.get(j).length());
                if (next[0] > span[1] || next[1] - span[0] > MAX_FETCH) {
                    break;
                }
                span[1] = Math.max(span[1], next[1]);
                j++;
            }
            try {
                openChannel(span[0], span[1]);
                stored.fetch(span[0], span[1]);
            } catch (IOException e) {
                IOException named = failed(e);
                for (int k = i; k < sorted.size(); k++) {
                    sorted.get(k).byteBuffer().completeExceptionally(named);
                }
                stored.done();
                return;
            }
            for (int k = i; k < j; k++) {
                read(sorted.get(k), allocate);
            }
            stored.done();
            i = j;
        }
    }

    private void read(FileRange range, IntFunction<ByteBuffer> allocate) {
        CompletableFuture<ByteBuffer> future = range.byteBuffer();
        if (range.offset() + range.length() > length) { // before allocating for it
            future.completeExceptionally(new EOFException(file.location() + ": the range of " + range.length()
                    + " bytes at " + range.offset() + " ends past the end of the file, " + length + " bytes"));
            return;
        }
        byte[] b = new byte[range.length()];
        try {
            channel.readFully(range.offset(), b, 0, b.length);
            ByteBuffer buffer = allocate.apply(b.length);
            int start = buffer.position();
            buffer.put(b).limit(buffer.position()).position(start);
            future.complete(buffer);
        } catch (IOException e) {
            future.completeExceptionally(failed(e));
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        } finally {
            Arrays.fill(b, (byte) 0);
        }
    }

    @Override
    public long getPos() throws IOException {
        checkOpen();
        return pos;
    }

    /** Moves the position; the next read reads on from there. Past the end fails. */
    @Override
    public void seek(long newPos) throws IOException {
        checkOpen();
        if (newPos < 0) {
            throw new EOFException(file.location() + ": cannot seek to a negative position, " + newPos);
        }
        if (newPos == pos) {
            return;
        }
        if (channel == null && file.lengthKnown() && newPos > file.getLength()) {
            throw new EOFException(file.location() + ": cannot seek to " + newPos + ", past the end of the file, "
                    + file.getLength() + " bytes");
        }
        if (channel == null && sequential != null && newPos < sequentialPos) {
            openChannel(-1, -1); // back: by position from now on
        }
        if (channel != null && newPos > length) {
            throw new EOFException(file.location() + ": cannot seek to " + newPos + ", past the end of the file, " + length
                    + " bytes");
        }
        pos = newPos;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n <= 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        checkOpen();
        if (off < 0 || len < 0 || off + len > b.length) {
            throw new IndexOutOfBoundsException("offset " + off + ", length " + len + " in a buffer of " + b.length);
        }
        if (len == 0) {
            return 0;
        }
        try {
            if (channel == null && sequential == null && !file.lengthKnown() && pos == 0) {
                openSequential();
            }
            if (channel == null && sequential != null) {
                while (sequentialPos < pos) { // a seek forward: read on to it
                    long skipped = sequential.skip(pos - sequentialPos);
                    if (skipped <= 0) {
                        return -1; // the end, authenticated
                    }
                    sequentialPos += skipped;
                }
                int n = sequential.read(b, off, len);
                if (n > 0) {
                    sequentialPos += n;
                    pos += n;
                }
                return n;
            }
            if (pos == 0) {
                openChannel(0, -1); // from the start: sequentially
            } else {
                long[] range = storedRange(pos, 1);
                openChannel(range[0], range[1]);
            }
            channel.position(pos);
            int n = channel.read(ByteBuffer.wrap(b, off, len));
            if (n > 0) {
                pos += n;
            }
            return n;
        } catch (IOException e) {
            throw failed(e);
        }
    }

    /**
     * Reads the stored file's first bytes with the wrapped stream's own reads (one request that
     * goes on with the content) and decrypts on from there, with no length.
     */
    private void openSequential() throws IOException {
        byte[] head = new byte[SealedReader.FIRST_BYTES];
        int got = 0;
        while (got < head.length) {
            int n = in.read(head, got, head.length - got);
            if (n < 0) {
                break;
            }
            got += n;
        }
        first = Arrays.copyOf(head, got);
        SealedReader.Key key = storage.key(file.location(), first, got < head.length ? got : -1);
        try {
            if (key.compressed()) {
                throw compressed();
            }
            InputStream rest = new FilterInputStream(in) {
                @Override
                public void close() {
                    // this stream closes the wrapped one
                }
            };
            InputStream message = new SequenceInputStream(
                    new ByteArrayInputStream(first, (int) key.base(), got - (int) key.base()), rest);
            sequential = key.streams().decrypt(message);
        } finally {
            key.streams().destroy();
        }
    }

    @Override
    public int available() throws IOException {
        checkOpen();
        return channel == null ? 0 : (int) Math.min(Integer.MAX_VALUE, Math.max(0, length - pos));
    }

    /** Closes the channel (zeroing its key and cached chunks), then the wrapped stream. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        stored.fetched = null;
        Exception failure = null;
        for (java.io.Closeable c : new java.io.Closeable[] {sequential, channel, in}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (IOException | RuntimeException e) { // every one closed: the first failure, the rest suppressed
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure instanceof IOException io) {
            throw io;
        } else if (failure != null) {
            throw (RuntimeException) failure;
        }
    }

    @Override
    public String toString() {
        return "SealedFileIO input(" + file.location() + ")";
    }
}
