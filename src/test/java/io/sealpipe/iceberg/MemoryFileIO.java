package io.sealpipe.iceberg;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.iceberg.io.DelegateFileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.RangeReadable;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * An in-memory FileIO that counts requests as S3FileIO makes them: a range read
 * ({@code readFully}, {@code readTail}) is one GET of its bytes; a stream's reads are one GET
 * from where they start until a seek elsewhere (bytes counted as read); {@code getLength()} of a
 * file made without a length, and {@code exists()}, are one HEAD. Stores are shared by name
 * ({@value #STORE}), as CatalogUtil makes the FileIO itself.
 */
public class MemoryFileIO implements DelegateFileIO {
    private static final long serialVersionUID = 1L;
    static final String STORE = "memory.store";
    static final Map<String, Store> STORES = new ConcurrentHashMap<>();

    /** The objects and the request counts. */
    static final class Store {
        final ConcurrentSkipListMap<String, byte[]> objects = new ConcurrentSkipListMap<>();
        final AtomicLong gets = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong heads = new AtomicLong();
        final Map<String, Long> givenLengths = new ConcurrentHashMap<>();
        /** Writes past this many bytes of a file fail (a full disk, a lost connection); -1: none do. */
        final AtomicLong failWritesAfter = new AtomicLong(-1);
        final List<String> log = java.util.Collections.synchronizedList(new ArrayList<>());

        void reset() {
            gets.set(0);
            bytes.set(0);
            heads.set(0);
            log.clear();
        }

        @Override
        public String toString() {
            return gets + " GETs, " + bytes + " bytes, " + heads + " HEADs " + log;
        }
    }

    static Store store(String name) {
        return STORES.computeIfAbsent(name, n -> new Store());
    }

    private Map<String, String> properties = Map.of();
    private transient Store store;

    public MemoryFileIO() {
    }

    @Override
    public void initialize(Map<String, String> props) {
        properties = Map.copyOf(props);
        store = store(props.getOrDefault(STORE, "default"));
    }

    private Store store() {
        if (store == null) {
            store = store(properties.getOrDefault(STORE, "default"));
        }
        return store;
    }

    @Override
    public Map<String, String> properties() {
        return properties;
    }

    @Override
    public InputFile newInputFile(String path) {
        return new In(store(), path, -1);
    }

    @Override
    public InputFile newInputFile(String path, long length) {
        store().givenLengths.put(path, length);
        return new In(store(), path, length);
    }

    @Override
    public OutputFile newOutputFile(String path) {
        return new Out(store(), path);
    }

    @Override
    public void deleteFile(String path) {
        store().objects.remove(path);
    }

    @Override
    public Iterable<FileInfo> listPrefix(String prefix) {
        List<FileInfo> found = new ArrayList<>();
        store().objects.tailMap(prefix).forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                found.add(new FileInfo(k, v.length, 0));
            }
        });
        return found;
    }

    @Override
    public void deletePrefix(String prefix) {
        store().objects.keySet().removeIf(k -> k.startsWith(prefix));
    }

    @Override
    public void deleteFiles(Iterable<String> paths) {
        paths.forEach(store().objects::remove);
    }

    private record In(Store store, String path, long length) implements InputFile {
        @Override
        public long getLength() {
            if (length >= 0) {
                return length;
            }
            store.heads.incrementAndGet();
            store.log.add("HEAD");
            return bytes().length;
        }

        byte[] bytes() {
            byte[] b = store.objects.get(path);
            if (b == null) {
                throw new UncheckedIOException(new FileNotFoundException(path));
            }
            return b;
        }

        @Override
        public SeekableInputStream newStream() {
            return new Stream(store, bytes());
        }

        @Override
        public String location() {
            return path;
        }

        @Override
        public boolean exists() {
            store.heads.incrementAndGet();
            return store.objects.containsKey(path);
        }
    }

    /** A stream with range reads; its sequential reads are one GET per run. */
    static final class Stream extends SeekableInputStream implements RangeReadable {
        private final Store store;
        private final byte[] data;
        private long pos;
        private long streamAt = -1; // where the open GET is, or -1

        Stream(Store store, byte[] data) {
            this.store = store;
            this.data = data;
        }

        @Override
        public long getPos() {
            return pos;
        }

        @Override
        public void seek(long newPos) {
            pos = newPos;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (pos >= data.length) {
                return -1;
            }
            if (streamAt != pos) {
                store.gets.incrementAndGet();
                store.log.add("GET " + pos + "-");
            }
            int n = (int) Math.min(len, data.length - pos);
            System.arraycopy(data, (int) pos, b, off, n);
            pos += n;
            streamAt = pos;
            store.bytes.addAndGet(n);
            return n;
        }

        @Override
        public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
            store.gets.incrementAndGet();
            store.log.add("GET " + position + "+" + length);
            if (position + length > data.length) {
                throw new EOFException("past the end: " + (position + length) + " > " + data.length);
            }
            System.arraycopy(data, (int) position, buffer, offset, length);
            store.bytes.addAndGet(length);
        }

        @Override
        public int readTail(byte[] buffer, int offset, int length) {
            store.gets.incrementAndGet();
            int n = Math.min(length, data.length);
            store.log.add("GET -" + n);
            System.arraycopy(data, data.length - n, buffer, offset, n);
            store.bytes.addAndGet(n);
            return n;
        }

        @Override
        public void close() {
        }
    }

    private record Out(Store store, String path) implements OutputFile {
        @Override
        public PositionOutputStream create() {
            if (store.objects.containsKey(path)) {
                throw new org.apache.iceberg.exceptions.AlreadyExistsException("exists: %s", path);
            }
            return createOrOverwrite();
        }

        @Override
        public PositionOutputStream createOrOverwrite() {
            return new PositionOutputStream() {
                private byte[] buffer = new byte[0];
                private int size;

                @Override
                public long getPos() {
                    return size;
                }

                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    long limit = store.failWritesAfter.get();
                    if (limit >= 0 && size + len > limit) {
                        throw new IOException("the write failed: " + path + " may hold " + limit + " bytes");
                    }
                    if (size + len > buffer.length) {
                        buffer = Arrays.copyOf(buffer, Math.max(size + len, buffer.length * 2));
                    }
                    System.arraycopy(b, off, buffer, size, len);
                    size += len;
                }

                @Override
                public void close() {
                    store.objects.put(path, Arrays.copyOf(buffer, size)); // stored when closed, as S3 does
                }
            };
        }

        @Override
        public String location() {
            return path;
        }

        @Override
        public InputFile toInputFile() {
            return new In(store, path, -1);
        }
    }
}
