package io.sealpipe.cli;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Input and output files of the CLI, with the temp-file-then-rename rule for outputs. */
final class Io {
    private Io() {}

    static final int COPY_BUFFER = 1 << 20;

    /** A one-line reason for an I/O failure. */
    static String describe(IOException e) {
        if (e instanceof NoSuchFileException n) {
            return (n.getReason() != null ? n.getReason() : "no such file") + ": " + n.getFile();
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied: " + e.getMessage();
        }
        if (e instanceof FileAlreadyExistsException) {
            return "already exists: " + e.getMessage();
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    /**
     * The reason for an I/O failure without the file's name: for a name that must not be printed
     * ({@code --key-file} given the key itself by mistake).
     */
    static String reasonOnly(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "no such file";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileSystemException f) {
            return f.getReason() != null ? f.getReason() : e.getClass().getSimpleName();
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    static boolean isStd(String path) {
        return path == null || path.equals("-");
    }

    /**
     * Whether the files IN and OUT are one file, also through hard and symbolic links; false for
     * standard input or output and when either does not exist (or cannot be checked: opening it
     * will say why).
     */
    static boolean isSameFile(String in, String out) {
        if (isStd(in) || isStd(out)) {
            return false;
        }
        Path i = Path.of(in);
        Path o = Path.of(out);
        try {
            return Files.exists(i) && Files.exists(o) && Files.isSameFile(i, o);
        } catch (IOException e) {
            return false;
        }
    }

    static InputStream openInput(String path) throws IOException {
        if (isStd(path)) {
            return new FileInputStream(FileDescriptor.in);
        }
        Path p = Path.of(path);
        if (Files.isDirectory(p)) {
            throw new IOException("input " + path + " is a directory");
        }
        return Files.newInputStream(p);
    }

    /**
     * An output that becomes visible only when {@link Output#commit()} is called: a file is
     * written to a temporary file beside it and renamed over it; standard output is used as is.
     */
    static final class Output implements AutoCloseable {
        private final Path target;
        private final Path temp;
        final OutputStream stream;
        private boolean committed;

        Output(String path) throws IOException {
            if (isStd(path)) {
                target = null;
                temp = null;
                stream = new FileOutputStream(FileDescriptor.out);
            } else {
                target = Path.of(path).toAbsolutePath();
                if (Files.isDirectory(target)) {
                    throw new IOException("output " + path + " is a directory");
                }
                if (!Files.isDirectory(target.getParent())) {
                    throw new NoSuchFileException(target.getParent().toString(), null, "no such directory");
                }
                temp = Files.createTempFile(target.getParent(), "." + target.getFileName() + ".", ".tmp");
                stream = Files.newOutputStream(temp);
            }
        }

        /** Makes the output visible (renames the temporary file over the target). */
        void commit() throws IOException {
            if (target != null) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            committed = true;
        }

        /** Removes the temporary file if the output was not committed. */
        @Override
        public void close() throws IOException {
            if (temp != null && !committed) {
                Files.deleteIfExists(temp);
            }
        }
    }

    /**
     * Passes writes on to a stream until {@link #abort()}, then refuses them (closing still
     * closes the stream). Laid under an encrypting layer so that, after a failure, closing that
     * layer cannot write the end of its message.
     */
    static final class Gate extends OutputStream {
        private final OutputStream out;
        private boolean aborted;
        private long written;

        Gate(OutputStream out) {
            this.out = out;
        }

        /** Refuses every later write and flush. */
        void abort() {
            aborted = true;
        }

        /** Bytes passed on so far. */
        long written() {
            return written;
        }

        @Override
        public void write(int b) throws IOException {
            checkOpen();
            out.write(b);
            written++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            checkOpen();
            out.write(b, off, len);
            written += len;
        }

        @Override
        public void flush() throws IOException {
            if (!aborted) {
                out.flush();
            }
        }

        @Override
        public void close() throws IOException {
            out.close();
        }

        private void checkOpen() throws IOException {
            if (aborted) {
                throw new IOException("output abandoned after an earlier failure");
            }
        }
    }

    /** Copies everything from in to out in large blocks. */
    static void copy(InputStream in, OutputStream out) throws IOException {
        byte[] buffer = new byte[COPY_BUFFER];
        for (int n; (n = in.read(buffer)) >= 0; ) {
            out.write(buffer, 0, n);
        }
    }
}
