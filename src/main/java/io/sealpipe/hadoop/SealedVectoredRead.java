package io.sealpipe.hadoop;

import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmSeekableChannel;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.IntFunction;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.VectoredReadUtils;

/**
 * One {@code readVectored} call on a sealed file: the caller's plaintext ranges are mapped to
 * the chunks that hold them; the chunks are grouped into spans of at most
 * {@value #MAX_SPAN_CHUNKS} chunks, each span the chunks of ranges that share or adjoin chunks;
 * the spans' sealed bytes are read with the wrapped stream's own {@code readVectored} (S3A merges
 * them further and fetches them in parallel requests); and each chunk is decrypted and verified
 * once, as its span arrives, in the thread that completed it. A range may lie across several
 * spans: it is handed back once its last chunk is in. Every range gets its bytes only from chunks
 * that verified: a chunk that fails authentication fails the ranges that touch it, and no other,
 * and a failed range's buffer is zeroed.
 */
final class SealedVectoredRead {
    private static final int CHUNK = 16 * 1024;
    /** The most chunks one span (one wrapped range) holds: 1 MiB of plaintext. */
    private static final int MAX_SPAN_CHUNKS = 64;

    private final Path path;
    private final long base; // where the message starts in the stored file: after an envelope, or 0
    private final GcmSeekableChannel message;
    private final long length;

    private SealedVectoredRead(Path path, long base, GcmSeekableChannel message, long length) {
        this.path = path;
        this.base = base;
        this.message = message;
        this.length = length;
    }

    /**
     * Starts reading {@code ranges} of the plaintext of {@code message}, whose sealed bytes
     * {@code in} holds: each range's future is set, and its buffer allocated, before this
     * returns (in the caller's thread).
     *
     * @param base where the message starts in the stored file (after an envelope, or 0)
     * @param length the plaintext length as listed (from the stored length)
     * @return the bytes of the ranges that lie in the file (to count as read, in the caller's thread)
     * @throws IllegalArgumentException if ranges overlap or a length is negative
     * @throws EOFException if an offset is negative
     * @throws IOException if the wrapped stream refuses the read
     */
    static long read(Path path, FSDataInputStream in, long base, GcmSeekableChannel message, long length,
            List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate) throws IOException {
        return new SealedVectoredRead(path, base, message, length).start(in, ranges, allocate);
    }

    private long start(FSDataInputStream in, List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate)
            throws IOException {
        List<? extends FileRange> sorted = VectoredReadUtils.validateAndSortRanges(ranges, Optional.empty());
        for (FileRange range : sorted) {
            range.setData(new CompletableFuture<>());
        }
        List<Pending> pending = new ArrayList<>();
        List<Span> spans = new ArrayList<>();
        long inFile = 0;
        try {
            for (FileRange range : sorted) {
                if (range.getLength() == 0 || range.getOffset() + range.getLength() > length) {
                    emptyOrPastTheEnd(range, allocate);
                    continue;
                }
                Pending p = new Pending(range);
                try {
                    message.sealedLength(p.last); // the whole chunks of an unfinished file, and no further
                } catch (StreamAuthenticationException e) {
                    range.getData().completeExceptionally(e.in(path.toString()));
                    continue;
                }
                p.buffer = allocate.apply(range.getLength());
                p.start = p.buffer.position();
                pending.add(p);
                inFile += range.getLength();
            }
            spans = spans(pending);
            if (spans.isEmpty()) {
                return inFile;
            }
            List<FileRange> sealed = new ArrayList<>(spans.size());
            for (Span s : spans) {
                sealed.add(s.sealedRange());
            }
            in.readVectored(sealed, ByteBuffer::allocate); // heap buffers: the engines open arrays
            for (int i = 0; i < spans.size(); i++) {
                Span s = spans.get(i);
                sealed.get(i).getData().whenComplete(s::deliver);
            }
            return inFile;
        } catch (IOException | RuntimeException | Error e) {
            for (Pending p : pending) {
                p.fail(e);
            }
            throw e;
        }
    }

    /**
     * The spans for the ranges (sorted, not overlapping): runs of chunks that the ranges share or
     * adjoin, cut into spans of at most {@value #MAX_SPAN_CHUNKS} chunks, each with the ranges it
     * serves.
     */
    private List<Span> spans(List<Pending> pending) {
        List<Span> spans = new ArrayList<>();
        int i = 0;
        while (i < pending.size()) {
            long runFirst = pending.get(i).first;
            long runLast = pending.get(i).last;
            int j = i + 1;
            while (j < pending.size() && pending.get(j).first <= runLast + 1) {
                runLast = Math.max(runLast, pending.get(j).last);
                j++;
            }
            int from = i; // the first range that may touch the next span
            for (long first = runFirst; first <= runLast; first += MAX_SPAN_CHUNKS) {
                Span span = new Span(first, Math.min(runLast, first + MAX_SPAN_CHUNKS - 1));
                while (from < j && pending.get(from).last < span.first) {
                    from++;
                }
                for (int k = from; k < j && pending.get(k).first <= span.last; k++) {
                    span.ranges.add(pending.get(k));
                }
                spans.add(span);
            }
            i = j;
        }
        return spans;
    }

    /**
     * An empty range within the file gets an empty buffer. A range past the end fails with an
     * {@link EOFException} once the end is known to be authentic (the final chunk verified), as
     * a positioned read past it would.
     */
    private void emptyOrPastTheEnd(FileRange range, IntFunction<ByteBuffer> allocate) {
        CompletableFuture<ByteBuffer> data = range.getData();
        if (range.getOffset() + range.getLength() <= length) {
            ByteBuffer empty = allocate.apply(0);
            empty.limit(empty.position());
            data.complete(empty);
            return;
        }
        try {
            long end = message.size(); // authenticates the length, or throws: a cut-short file has no end
            if (range.getOffset() + range.getLength() > end) {
                data.completeExceptionally(new EOFException(path + ": the range of " + range.getLength() + " bytes at "
                        + range.getOffset() + " ends past the end of the file, " + end + " bytes"));
            } else {
                data.completeExceptionally(new IOException(path + ": its listed length, " + length
                        + " bytes, is not its authenticated length, " + end + ": it changed while open"));
            }
        } catch (StreamAuthenticationException e) {
            data.completeExceptionally(e.in(path.toString()));
        } catch (IOException | RuntimeException e) {
            data.completeExceptionally(e);
        }
    }

    /** A caller's range on its way: its chunks, its buffer, and how many of its chunks are still to come. */
    private static final class Pending {
        final FileRange range;
        final long first;
        final long last;
        ByteBuffer buffer;
        int start; // the buffer's position when allocated
        private int chunksToCome; // guarded by this
        private boolean done; // guarded by this

        Pending(FileRange range) {
            this.range = range;
            this.first = range.getOffset() / CHUNK;
            this.last = (range.getOffset() + range.getLength() - 1) / CHUNK;
            this.chunksToCome = (int) (last - first + 1);
        }

        boolean touches(long chunk) {
            return first <= chunk && chunk <= last;
        }

        /** Copies chunk {@code c}'s part of the range, and hands the buffer over once it was the last to come. */
        void take(long c, byte[] plain, int n) {
            long chunkStart = c * CHUNK;
            long from = Math.max(range.getOffset(), chunkStart);
            long to = Math.min(range.getOffset() + range.getLength(), chunkStart + n);
            synchronized (this) {
                if (done) {
                    return;
                }
                buffer.put(start + (int) (from - range.getOffset()), plain, (int) (from - chunkStart), (int) (to - from));
                if (--chunksToCome > 0) {
                    return;
                }
                done = true;
                buffer.limit(start + range.getLength()).position(start);
            }
            range.getData().complete(buffer);
        }

        /** Fails the range, unless it is done, and zeroes what its buffer holds. */
        void fail(Throwable cause) {
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
                if (buffer != null) {
                    for (int i = 0; i < range.getLength(); i++) {
                        buffer.put(start + i, (byte) 0);
                    }
                }
            }
            range.getData().completeExceptionally(cause);
        }
    }

    /** Chunks {@code first .. last}, read in one wrapped range, and the caller's ranges that touch them. */
    private final class Span {
        final long first;
        final long last;
        final List<Pending> ranges = new ArrayList<>();

        Span(long first, long last) {
            this.first = first;
            this.last = last;
        }

        FileRange sealedRange() throws IOException {
            long from = GcmSeekableChannel.sealedOffset(first);
            long to = GcmSeekableChannel.sealedOffset(last) + message.sealedLength(last);
            return FileRange.createFileRange(base + from, (int) (to - from), this); // at most 64 sealed chunks
        }

        /** Opens the span's chunks in order and hands each its ranges' parts. */
        void deliver(ByteBuffer sealed, Throwable failure) {
            if (failure != null) {
                failAll(failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure);
                return;
            }
            byte[] plain = new byte[CHUNK];
            try {
                byte[] array;
                int base;
                if (sealed.hasArray()) {
                    array = sealed.array();
                    base = sealed.arrayOffset() + sealed.position();
                } else {
                    array = new byte[sealed.remaining()];
                    sealed.duplicate().get(array);
                    base = 0;
                }
                long spanStart = GcmSeekableChannel.sealedOffset(first);
                int available = sealed.remaining();
                for (long c = first; c <= last; c++) {
                    int at = (int) (GcmSeekableChannel.sealedOffset(c) - spanStart);
                    int n;
                    try {
                        if (at + message.sealedLength(c) > available) {
                            throw new EOFException(path + ": chunk " + c + " is cut short: the wrapped file system returned "
                                    + available + " bytes from " + spanStart + ", which end before it");
                        }
                        n = message.openChunk(c, array, base + at, plain, 0);
                    } catch (StreamAuthenticationException e) {
                        fail(c, e.in(path.toString()));
                        continue;
                    } catch (IOException e) {
                        fail(c, e);
                        continue;
                    }
                    for (Pending p : ranges) {
                        if (p.touches(c)) {
                            p.take(c, plain, n);
                        }
                    }
                }
            } catch (RuntimeException | Error e) {
                failAll(e);
            } finally {
                Arrays.fill(plain, (byte) 0);
            }
        }

        /** Fails the ranges that touch chunk {@code c}. */
        private void fail(long c, Throwable cause) {
            for (Pending p : ranges) {
                if (p.touches(c)) {
                    p.fail(cause);
                }
            }
        }

        void failAll(Throwable cause) {
            for (Pending p : ranges) {
                p.fail(cause);
            }
        }
    }
}
