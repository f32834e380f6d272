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
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Input and output files of the CLI, with the temp-file-then-publish rule for outputs. */
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
     * written to a temporary file beside it, {@code .OUT.sealpipe-PID.tmp} (PID this process's
     * id), synced, and then published under its name; standard output is used as is.
     *
     * <p><b>Publishing.</b> Without {@code replace}, the temporary file gets the name by a hard
     * link, which fails if the name exists (whatever made it, and however late), so an existing
     * file is never replaced: {@link #commit()} then throws {@link FileAlreadyExistsException}.
     * With {@code replace} it is renamed over OUT, which keeps its permissions. Either step is
     * atomic: OUT is the old file or the whole new one, never a part. The directory is synced
     * after, so a published OUT survives a crash. On a file system without hard links, a
     * non-replacing move is used; the JDK checks that OUT is absent just before it renames, so
     * a file made in between would be replaced: the one gap left, on those file systems only.
     *
     * <p><b>What is left after a failure.</b> The temporary file holds what would be OUT
     * (decrypted plaintext, a key), so it is created readable by its owner only (rw-------, from
     * its first byte), and it is removed on every way out but success: by {@link #close()}, and
     * by a shutdown hook when SIGINT or SIGTERM ends the JVM mid-stream (the JVM then exits 130
     * or 143 on its own). The hook is removed by {@code close()}, so a normal exit runs nothing,
     * and it never removes a committed file. Only a SIGKILL or a crash leaves a temporary file,
     * and never OUT: the next output to the same OUT removes such leftovers (see
     * {@link #removeLeftovers}). The writer holds a lock on its temporary file while it writes, so
     * a process in another PID namespace or on another NFS client does not take it for a
     * leftover.
     *
     * <p>One thread writes and commits; the shutdown hook may run at any time.
     */
    static final class Output implements AutoCloseable {
        private static final FileAttribute<?> OWNER_ONLY =
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
        private static final String MARK = ".sealpipe-";
        private static final String SUFFIX = ".tmp";
        /** The part of a temporary file's name after {@code .OUT.sealpipe-}: the PID, and a number from 2 on. */
        private static final Pattern PID = Pattern.compile("([0-9]{1,18})(?:-[0-9]{1,9})?");
        /** The temporary files this JVM is writing: {@link #removeLeftovers} never takes them for leftovers. */
        private static final Set<Path> WRITING = ConcurrentHashMap.newKeySet();

        private final Path target;
        private final boolean replace;
        private final PrintWriter err;
        private final Thread removeOnSignal;
        final OutputStream stream;
        private FileChannel channel; // guarded by this, like the fields below
        private Path temp;
        private boolean committed;
        private boolean removedOnSignal;

        /**
         * The output {@code path}: standard output for null or "-", else the file (see
         * {@link #file}).
         */
        static Output open(String path, PrintWriter err, boolean replace) throws IOException {
            return isStd(path) ? new Output(err) : file(Path.of(path), err, replace);
        }

        /**
         * The file {@code file}, replaced at {@link #commit()} if it exists only with {@code
         * replace}; {@code err} gets a line for each leftover removed and for a file removed on a
         * signal.
         */
        static Output file(Path file, PrintWriter err, boolean replace) throws IOException {
            return new Output(file, err, replace);
        }

        private Output(PrintWriter err) {
            this.err = err;
            target = null;
            replace = false;
            removeOnSignal = null;
            stream = new FileOutputStream(FileDescriptor.out);
        }

        private Output(Path file, PrintWriter err, boolean replace) throws IOException {
            this.err = err;
            this.replace = replace;
            target = file.toAbsolutePath();
            if (Files.isDirectory(target)) {
                throw new IOException("output " + file + " is a directory");
            }
            Path dir = target.getParent();
            if (!Files.isDirectory(dir)) {
                throw new NoSuchFileException(dir.toString(), null, "no such directory");
            }
            dir = dir.toRealPath(); // one name per temporary file, for WRITING
            String name = target.getFileName().toString();
            removeLeftovers(dir, name, err);
            // Registered before the file exists: there is no moment with a file and no hook.
            removeOnSignal = new Thread(this::removeUnfinished, "sealpipe-remove-unfinished-output");
            Runtime.getRuntime().addShutdownHook(removeOnSignal);
            try {
                synchronized (this) {
                    createTemporaryFile(dir, name);
                }
                stream = new TemporaryFileStream(channel);
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }

        /**
         * Creates {@code .NAME.sealpipe-PID.tmp} (with {@code -2}, {@code -3}... after the PID
         * while this JVM writes that one), owner only, and locks it.
         */
        private void createTemporaryFile(Path dir, String name) throws IOException {
            String prefix = "." + name + MARK + ProcessHandle.current().pid();
            for (int n = 1; ; n++) {
                Path candidate = dir.resolve(prefix + (n == 1 ? "" : "-" + n) + SUFFIX);
                if (!WRITING.add(candidate)) {
                    continue;
                }
                try {
                    channel = FileChannel.open(candidate,
                            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), ownerOnly(dir));
                    temp = candidate;
                } catch (FileAlreadyExistsException e) {
                    WRITING.remove(candidate); // a leftover that could not be removed: the next number
                    if (n < 100) {
                        continue;
                    }
                    throw e;
                } catch (IOException | RuntimeException e) {
                    WRITING.remove(candidate);
                    throw e;
                }
                try {
                    channel.tryLock(); // null only if another process took it first; then it has no lock
                } catch (IOException | OverlappingFileLockException e) {
                    // No locks on this file system: leftovers are told by their PID alone.
                }
                return;
            }
        }

        static FileAttribute<?>[] ownerOnly(Path dir) {
            boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
            return posix ? new FileAttribute<?>[] {OWNER_ONLY} : new FileAttribute<?>[0];
        }

        /**
         * Makes the output visible: syncs the temporary file, publishes it as OUT (without
         * {@code replace}, only if OUT does not exist) and syncs the directory.
         *
         * @throws FileAlreadyExistsException without {@code replace}, if OUT exists: it is left
         *     as it is, and {@link #close()} removes the temporary file
         */
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
            if (target == null) {
                stream.flush();
                committed = true;
                return;
            }
            TestHooks.reached(TestHooks.Step.WRITTEN, temp);
            if (replace) {
                keepPermissions(temp, target);
            }
            channel.force(true); // the bytes (and the mode) on the disk before the name
            TestHooks.reached(TestHooks.Step.SYNCED, target);
            if (replace) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } else {
                publishWithoutReplacing(temp, target);
            }
            committed = true;
            TestHooks.reached(TestHooks.Step.PUBLISHED, target);
            try (FileChannel directory = FileChannel.open(target.getParent(), StandardOpenOption.READ)) {
                directory.force(true);
            } catch (IOException e) {
                throw new IOException(target + " was written, but its directory could not be synced (" + describe(e)
                        + "): a crash now could lose it", e);
            }
            TestHooks.reached(TestHooks.Step.DIRECTORY_SYNCED, target);
        }

        /**
         * A hard link, which fails if {@code target} exists, then the temporary name removed. Not
         * {@code Files.move} without REPLACE_EXISTING: on Unix the JDK checks that the target is
         * absent and then calls rename(2), which replaces a file made in between (and with
         * ATOMIC_MOVE it replaces any file).
         */
        private static void publishWithoutReplacing(Path temp, Path target) throws IOException {
            try {
                Files.createLink(target, temp);
            } catch (FileAlreadyExistsException | NoSuchFileException | AccessDeniedException e) {
                throw e;
            } catch (FileSystemException | UnsupportedOperationException noHardLinks) {
                Files.move(temp, target); // see the class comment: the check-then-rename gap
                return;
            }
            try {
                Files.delete(temp);
            } catch (IOException e) {
                // OUT is published; a second name for it is left, which the next output to OUT
                // removes once this process has ended.
            }
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
                try {
                    if (temp != null && !committed) {
                        Files.deleteIfExists(temp); // before its lock goes with the channel
                    }
                } finally {
                    if (temp != null) {
                        WRITING.remove(temp);
                    }
                    if (channel != null) {
                        channel.close();
                    }
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

        /**
         * Removes the temporary files that runs writing {@code name} left in {@code dir} when they
         * were killed (SIGKILL) or the machine stopped: {@code .NAME.sealpipe-PID.tmp} (or {@code
         * -PID-N.tmp}) whose process is no longer running and that no process holds locked. This
         * JVM's own PID counts as ended for the files it is not writing (an earlier process had
         * that PID). One line on {@code err} for each file removed; a file that cannot be checked
         * or removed is left, silently: the output goes on.
         */
        static void removeLeftovers(Path dir, String name, PrintWriter err) {
            String prefix = "." + name + MARK;
            long self = ProcessHandle.current().pid();
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, f -> {
                String n = f.getFileName().toString();
                return n.length() > prefix.length() + SUFFIX.length() && n.startsWith(prefix) && n.endsWith(SUFFIX);
            })) {
                for (Path file : files) {
                    String n = file.getFileName().toString();
                    Matcher m = PID.matcher(n.substring(prefix.length(), n.length() - SUFFIX.length()));
                    if (!m.matches() || WRITING.contains(file)) {
                        continue;
                    }
                    long pid = Long.parseLong(m.group(1));
                    if (pid != self && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                        continue; // it may be writing it still
                    }
                    if (removeIfUnlocked(file)) {
                        err.println("sealpipe: removed " + file
                                + ", left by an earlier run that did not finish (process "
                                + pid + (pid == self ? " ended; this process has its number now)"
                                : " is no longer running)"));
                        err.flush();
                    }
                }
            } catch (IOException | DirectoryIteratorException e) {
                // A directory that cannot be listed: the output will say if it cannot be written.
            }
        }

        /** Removes a regular file that no process holds locked; whether it did. */
        private static boolean removeIfUnlocked(Path file) {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
            try (FileChannel c = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    if (c.tryLock(0, Long.MAX_VALUE, true) == null) {
                        return false; // a writer in another PID namespace or on another machine
                    }
                } catch (OverlappingFileLockException e) {
                    return false; // this JVM has it locked
                } catch (IOException noLocks) {
                    // A file system without locks: the PID decides.
                }
                Files.delete(file);
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        /**
         * Writes to the temporary file; {@code close()} leaves the file open, for
         * {@link Output#commit()} to sync it and to keep its lock until it has its name.
         */
        private static final class TemporaryFileStream extends OutputStream {
            private final OutputStream out;
            private boolean closed;

            TemporaryFileStream(FileChannel channel) {
                out = Channels.newOutputStream(channel); // never closed: that would close the channel
            }

            private void checkOpen() throws IOException {
                if (closed) {
                    throw new IOException("the output is closed");
                }
            }

            @Override
            public void write(int b) throws IOException {
                checkOpen();
                out.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                checkOpen();
                out.write(b, off, len);
            }

            @Override
            public void close() {
                closed = true;
            }
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
