package io.sealpipe.hadoop;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Hadoop's local file system (checksummed over the raw one, as {@code file://} is by default)
 * whose files named {@code *}{@value #FAILS} fail to read: every read at or past byte
 * {@value #FAIL_AFTER} throws an {@link IOException}, as a source on a failing disk or a lost
 * connection does; every other file reads as usual. Configured as {@code fs.file.impl} (with
 * {@code fs.file.impl.disable.cache=true}, so that no other test gets it from Hadoop's cache), it
 * is the source of Hadoop's copy helpers ({@code copyFromLocalFile} and {@code hadoop fs -put}
 * included), of DistCp and of a MapReduce job's input, and the file system under {@code sfile}
 * (a sealed {@code *.fails} file then fails too: read the output through a plain {@code file}).
 *
 * <p>One copy for the core tests and the {@code src/it/hadoop-3.4} project: both add {@code
 * src/test/hadoop-shared/java} to their test sources.
 */
public final class FailingLocalFileSystem extends LocalFileSystem {
    /** The end of the name of the files that fail. */
    public static final String FAILS = ".fails";
    /** The bytes a failing file gives before it fails. */
    public static final int FAIL_AFTER = 100_000;
    private static final AtomicInteger FAILURES = new AtomicInteger();

    public FailingLocalFileSystem() {
        super(new Raw());
    }

    /** How many reads failed in this JVM so far: a test's proof that its source did fail. */
    public static int failures() {
        return FAILURES.get();
    }

    /** The raw local file system whose {@code *.fails} files fail. */
    public static final class Raw extends RawLocalFileSystem {
        @Override
        public FSDataInputStream open(Path f, int bufferSize) throws IOException {
            FSDataInputStream in = super.open(f, bufferSize);
            return f.getName().endsWith(FAILS) ? new FSDataInputStream(new FailingStream(in, f)) : in;
        }
    }

    /** The first {@value #FAIL_AFTER} bytes of the file, then an {@link IOException} on every read. */
    private static final class FailingStream extends FSInputStream {
        private final FSDataInputStream in;
        private final Path path;
        private long position;

        FailingStream(FSDataInputStream in, Path path) {
            this.in = in;
            this.path = path;
        }

        private void failIfAtTheFailure() throws IOException {
            if (position >= FAIL_AFTER) {
                FAILURES.incrementAndGet();
                throw new IOException(path + ": reading failed at byte " + position
                        + " (on purpose: a failing source)");
            }
        }

        @Override
        public int read() throws IOException {
            failIfAtTheFailure();
            int b = in.read();
            if (b >= 0) {
                position++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            failIfAtTheFailure();
            int n = in.read(b, off, (int) Math.min(len, FAIL_AFTER - position));
            if (n > 0) {
                position += n;
            }
            return n;
        }

        @Override
        public void seek(long pos) throws IOException {
            in.seek(pos);
            position = pos;
        }

        @Override
        public long getPos() {
            return position;
        }

        @Override
        public boolean seekToNewSource(long targetPos) {
            return false;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
