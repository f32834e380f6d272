package io.sealpipe.cli;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;

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
     *
     * <p>The temporary file holds what would be OUT (decrypted plaintext), so it is created
     * readable by its owner only (rw-------, from its first byte), and it is removed on every
     * way out but success: by {@link #close()}, and by a shutdown hook when SIGINT or SIGTERM
     * ends the JVM mid-stream (the JVM then exits 130 or 143 on its own). The hook is removed
     * by {@code close()}, so a normal exit runs nothing, and it never removes a committed file.
     */
    static final class Output implements AutoCloseable {
        private static final FileAttribute<?> OWNER_ONLY =
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

        private final Path target;
        private final PrintWriter err;
        private final Thread removeOnSignal;
        final OutputStream stream;
        private Path temp; // guarded by this, like the two flags
        private boolean committed;
        private boolean removedOnSignal;

        /** The output {@code path}; {@code err} gets the line about a file removed on a signal. */
        Output(String path, PrintWriter err) throws IOException {
            this.err = err;
            if (isStd(path)) {
                target = null;
                removeOnSignal = null;
                stream = new FileOutputStream(FileDescriptor.out);
                return;
            }
            target = Path.of(path).toAbsolutePath();
            if (Files.isDirectory(target)) {
                throw new IOException("output " + path + " is a directory");
            }
            Path dir = target.getParent();
            if (!Files.isDirectory(dir)) {
                throw new NoSuchFileException(dir.toString(), null, "no such directory");
            }
            // Registered before the file exists: there is no moment with a file and no hook.
            removeOnSignal = new Thread(this::removeUnfinished, "sealpipe-remove-unfinished-output");
            Runtime.getRuntime().addShutdownHook(removeOnSignal);
            try {
                synchronized (this) {
                    temp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp", ownerOnly(dir));
                }
                stream = Files.newOutputStream(temp);
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }

        private static FileAttribute<?>[] ownerOnly(Path dir) {
            boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
            return posix ? new FileAttribute<?>[] {OWNER_ONLY} : new FileAttribute<?>[0];
        }

        /** Makes the output visible (renames the temporary file over the target). */
        synchronized void commit() throws IOException {
            while (removedOnSignal) {
                // The JVM is exiting on a signal and the hook said what it removed: wait for the
                // halt rather than report the missing file as a second failure.
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted: the unfinished output was removed");
                }
            }
            if (target != null) {
                keepPermissions(temp, target);
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            committed = true;
        }

        /** A file replaced keeps its permissions (the new one is created readable by its owner only). */
        private static void keepPermissions(Path temp, Path target) throws IOException {
            try {
                Files.setPosixFilePermissions(temp, Files.getPosixFilePermissions(target));
            } catch (java.nio.file.NoSuchFileException | UnsupportedOperationException e) {
                // A new file, or a file system without POSIX permissions: the temporary file's stay.
            }
        }

        /** Removes the temporary file if the output was not committed, and the shutdown hook. */
        @Override
        public void close() throws IOException {
            if (removeOnSignal == null) {
                return;
            }
            try {
                Runtime.getRuntime().removeShutdownHook(removeOnSignal);
            } catch (IllegalStateException shuttingDown) {
                // A signal came: the hook runs too; deleting twice is harmless.
            }
            synchronized (this) {
                if (temp != null && !committed) {
                    Files.deleteIfExists(temp);
                }
            }
        }

        /** The shutdown hook: removes an uncommitted temporary file, in one line on err. */
        private synchronized void removeUnfinished() {
            if (temp == null || committed) {
                return;
            }
            removedOnSignal = true;
            try {
                Files.deleteIfExists(temp);
                err.println("sealpipe: interrupted: removed the unfinished " + temp + "; " + target + " was not changed");
            } catch (IOException e) {
                err.println("sealpipe: interrupted: could not remove the unfinished " + temp + ": " + describe(e));
            }
            err.flush();
        }
    }

    /** Passes writes on to a stream, counting the bytes (to say how much reached standard output). */
    static final class Counting extends FilterOutputStream {
        private long written;

        Counting(OutputStream out) {
            super(out);
        }

        /** Bytes passed on so far. */
        long written() {
            return written;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            written++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            written += len;
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
