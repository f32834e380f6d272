package io.sealpipe.hadoop;

import io.sealpipe.GcmSeekableChannel;
import io.sealpipe.StreamAuthenticationException;
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
import java.util.function.LongConsumer;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.VectoredReadUtils;

/**
 * One {@code readVectored} call on a sealed file: the caller's plaintext ranges are mapped to
 * the chunks that hold them, ranges that share or adjoin chunks are merged into spans, the spans'
 * sealed bytes are read with the wrapped stream's own {@code readVectored} (so S3A merges and
 * fetches them in parallel requests), and each chunk is decrypted and verified once, as its span
 * arrives, in the thread that completed it. Every range gets its bytes only from chunks that
 * verified: a chunk that fails authentication fails the ranges that touch it, and no other.
 */
final class SealedVectoredRead {
    private static final int CHUNK = 16 * 1024;
    /** Spans grow over adjoining chunks up to this many (1 MiB of plaintext); a range longer than that is one span. */
    private static final int MAX_SPAN_CHUNKS = 64;

    private final Path path;
    private final GcmSeekableChannel message;
    private final long length;
    private final IntFunction<ByteBuffer> allocate;
    private final LongConsumer bytesRead;

    private SealedVectoredRead(Path path, GcmSeekableChannel message, long length, IntFunction<ByteBuffer> allocate,
            LongConsumer bytesRead) {
        this.path = path;
        this.message = message;
        this.length = length;
        this.allocate = allocate;
        this.bytesRead = bytesRead;
    }

    /**
     * Starts reading {@code ranges} of the plaintext of {@code message}, whose sealed bytes
     * {@code in} holds: each range's future is set before this returns.
     *
     * @param length the plaintext length as listed (from the stored length)
     * @param bytesRead told the length of each range delivered
     * @throws IllegalArgumentException if ranges overlap or a length is negative
     * @throws EOFException if an offset is negative
     * @throws IOException if the wrapped stream refuses the read
     */
    static void read(Path path, FSDataInputStream in, GcmSeekableChannel message, long length,
            List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate, LongConsumer bytesRead) throws IOException {
        new SealedVectoredRead(path, message, length, allocate, bytesRead).start(in, ranges);
    }

    private void start(FSDataInputStream in, List<? extends FileRange> ranges) throws IOException {
        List<? extends FileRange> sorted = VectoredReadUtils.validateAndSortRanges(ranges, Optional.empty());
        for (FileRange range : sorted) {
            range.setData(new CompletableFuture<>());
        }
        List<Span> spans = new ArrayList<>();
        Span span = null;
        for (FileRange range : sorted) {
            if (range.getLength() == 0 || range.getOffset() + range.getLength() > length) {
                endOrEmpty(range);
                continue;
            }
            Pending p = new Pending(range);
            try {
                message.sealedLength(p.last); // the whole chunks of an unfinished file, and no further
            } catch (StreamAuthenticationException e) {
                range.getData().completeExceptionally(e.in(path.toString()));
                continue;
            }
            if (span == null || !span.takes(p)) {
                span = new Span(p.first);
                spans.add(span);
            }
            span.add(p);
        }
        if (spans.isEmpty()) {
            return;
        }
        List<FileRange> sealed = new ArrayList<>(spans.size());
        for (Span s : spans) {
            sealed.add(s.sealedRange());
        }
        try {
            in.readVectored(sealed, ByteBuffer::allocate); // heap buffers: the engines open arrays
        } catch (IOException | RuntimeException | Error e) {
            for (Span s : spans) {
                s.failAll(e);
            }
            throw e;
        }
        for (int i = 0; i < spans.size(); i++) {
            Span s = spans.get(i);
            sealed.get(i).getData().whenComplete(s::deliver);
        }
    }

    /**
     * A range past the end fails with an {@link EOFException} once the end is known to be
     * authentic (the final chunk verified), as a positioned read past it would; an empty range
     * within the file gets an empty buffer.
     */
    private void endOrEmpty(FileRange range) {
        CompletableFuture<ByteBuffer> data = range.getData();
        try {
            long end = message.size(); // authenticates the length, or throws: a cut-short file has no end
            if (range.getOffset() + range.getLength() > end) {
                data.completeExceptionally(new EOFException(path + ": the range of " + range.getLength() + " bytes at "
                        + range.getOffset() + " ends past the end of the file, " + end + " bytes"));
            } else {
                ByteBuffer empty = allocate.apply(0);
                empty.flip();
                data.complete(empty);
            }
        } catch (StreamAuthenticationException e) {
            data.completeExceptionally(e.in(path.toString()));
        } catch (IOException | RuntimeException e) {
            data.completeExceptionally(e);
        }
    }

    /** A caller's range on its way: its chunks and, once the first arrives, its buffer. */
    private static final class Pending {
        final FileRange range;
        final long first;
        final long last;
        ByteBuffer buffer;
        boolean done;

        Pending(FileRange range) {
            this.range = range;
            this.first = range.getOffset() / CHUNK;
            this.last = (range.getOffset() + range.getLength() - 1) / CHUNK;
        }

        boolean touches(long chunk) {
            return first <= chunk && chunk <= last;
        }
    }

    /** Chunks {@code first .. last}, read in one wrapped range, and the caller's ranges in them. */
    private final class Span {
        final long first;
        long last;
        final List<Pending> ranges = new ArrayList<>();

        Span(long first) {
            this.first = first;
            this.last = first;
        }

        /** A range that shares a chunk must join (each chunk is opened once); one that adjoins may. */
        boolean takes(Pending p) {
            return p.first <= last || (p.first == last + 1 && p.last - first < MAX_SPAN_CHUNKS);
        }

        void add(Pending p) {
            ranges.add(p);
            last = Math.max(last, p.last);
        }

        FileRange sealedRange() throws IOException {
            long from = GcmSeekableChannel.sealedOffset(first);
            long to = GcmSeekableChannel.sealedOffset(last) + message.sealedLength(last);
            return FileRange.createFileRange(from, Math.toIntExact(to - from), this);
        }

        /** Opens the span's chunks in order and hands each range its bytes once its last chunk is open. */
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
                    copy(c, plain, n);
                }
            } catch (RuntimeException | Error e) {
                failAll(e);
            } finally {
                Arrays.fill(plain, (byte) 0);
            }
        }

        /** Copies chunk {@code c}'s plaintext into the ranges it serves, and completes those it ends. */
        private void copy(long c, byte[] plain, int n) {
            long chunkStart = c * CHUNK;
            for (Pending p : ranges) {
                if (p.done || !p.touches(c)) {
                    continue;
                }
                if (p.buffer == null) {
                    p.buffer = allocate.apply(p.range.getLength());
                }
                long from = Math.max(p.range.getOffset(), chunkStart);
                long to = Math.min(p.range.getOffset() + p.range.getLength(), chunkStart + n);
                p.buffer.put(plain, (int) (from - chunkStart), (int) (to - from));
                if (p.last == c) {
                    p.done = true;
                    p.buffer.flip();
                    bytesRead.accept(p.range.getLength());
                    p.range.getData().complete(p.buffer);
                }
            }
        }

        /** Fails every range still open that touches chunk {@code c}. */
        private void fail(long c, Throwable cause) {
            for (Pending p : ranges) {
                if (!p.done && p.touches(c)) {
                    p.done = true;
                    p.range.getData().completeExceptionally(cause);
                }
            }
        }

        void failAll(Throwable cause) {
            for (Pending p : ranges) {
                if (!p.done) {
                    p.done = true;
                    p.range.getData().completeExceptionally(cause);
                }
            }
        }
    }
}
