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
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
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
     * written to a temporary file beside it, {@code .OUT.sealpipe-PID-RANDOM.tmp}, synced, and
     * then published under its name; standard output is used as is.
     *
     * <p><b>The temporary file is this run's alone.</b> PID is this process's id and RANDOM 16 hex
     * digits from {@link SecureRandom}: runs with one PID (two containers sharing a volume, each
     * run PID 1; two NFS clients) never make one name, and {@code CREATE_NEW} fails rather than
     * open a file that exists. The file is created as {@code .OUT.sealpipe-PID-RANDOM.new}, locked,
     * and only then renamed to its {@code .tmp} name, the only one {@link #removeLeftovers} looks
     * at: on a file system with locks, a {@code .tmp} file whose writer runs is always locked. Its
     * file key (device and inode) is noted when it is created; before it is given OUT's name (and
     * before {@code replace} changes its mode) the file under the temporary name must still have
     * that key, else {@link #commit()} throws and OUT is left as it was: a file that another
     * process removed or put in its place is never published. What is left: between that last
     * look and the rename, a process that removes this run's temporary file and makes another
     * under the same random name; no sealpipe run does. On a file system without file keys the
     * look is only that a regular file has the name.
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
     * its first byte), and it is removed on every way out but success (if it is still this run's
     * file): by {@link #close()}, and by a shutdown hook when SIGINT or SIGTERM ends the JVM
     * mid-stream (the JVM then exits 130 or 143 on its own). The hook is removed by {@code
     * close()}, so a normal exit runs nothing, and it never removes a committed file. Only a
     * SIGKILL or a crash leaves a temporary file, and never OUT: the next output to the same OUT
     * removes the leftovers it can tell are a dead run's (see {@link #removeLeftovers}). A SIGKILL
     * in the instant between creating the file and renaming it leaves an empty {@code .new} file.
     *
     * <p>One thread writes and commits; the shutdown hook may run at any time.
     */
    static final class Output implements AutoCloseable {
        private static final FileAttribute<?> OWNER_ONLY =
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
        private static final String MARK = ".sealpipe-";
        private static final String SUFFIX = ".tmp";
        /** The temporary file's suffix until it is locked: {@link #removeLeftovers} never looks at it. */
        private static final String UNLOCKED_SUFFIX = ".new";
        /**
         * The part of a temporary file's name after {@code .OUT.sealpipe-}: the PID, then the
         * random part (or, as earlier versions named them, nothing or a number from 2 on).
         */
        private static final Pattern PID = Pattern.compile("([0-9]{1,18})(?:-[0-9a-f]{16}|-[0-9]{1,9})?");
        private static final SecureRandom RANDOM = new SecureRandom();
        /** The temporary files this JVM is writing: {@link #removeLeftovers} says nothing of them. */
        private static final Set<Path> WRITING = ConcurrentHashMap.newKeySet();

        private final Path target;
        private final boolean replace;
        private final PrintWriter err;
        private final Thread removeOnSignal;
        final OutputStream stream;
        private FileChannel channel; // guarded by this, like the fields below
        private Path temp;
        /** The file key of the temporary file this run created; null where the file system has none. */
        private Object fileKey;
        /** Whether {@link #fileKey} was read: until then no file under the temporary name is taken for ours. */
        private boolean identified;
        /** The {@code .tmp} name while this JVM holds it in {@link #WRITING}. */
        private Path registered;
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
         * replace}; {@code err} gets a line for each leftover removed or left unsure and for a file
         * removed on a signal.
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
         * Creates {@code .NAME.sealpipe-PID-RANDOM.new}, owner only, locks it and renames it to
         * {@code .NAME.sealpipe-PID-RANDOM.tmp} (see the class comment).
         */
        private void createTemporaryFile(Path dir, String name) throws IOException {
            String base;
            Path created;
            for (int attempt = 1; ; attempt++) {
                byte[] random = new byte[8];
                RANDOM.nextBytes(random);
                base = "." + name + MARK + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(random);
                created = dir.resolve(base + UNLOCKED_SUFFIX);
                try {
                    channel = FileChannel.open(created,
                            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), ownerOnly(dir));
                    break;
                } catch (FileAlreadyExistsException e) {
                    if (attempt == 3) {
                        throw e; // 64 random bits three times taken: something else makes these names
                    }
                }
            }
            temp = created;
            try {
                // The file just created: another under this name would need a process that removes
                // it and makes one with this random name in the meantime.
                fileKey = Files.readAttributes(created, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                        .fileKey();
            } catch (NoSuchFileException e) {
                throw notOurs("", "before this run locked it");
            }
            identified = true;
            TestHooks.reached(TestHooks.Step.CREATED, created);
            boolean lockedByAnother;
            try {
                lockedByAnother = channel.tryLock() == null;
            } catch (IOException | OverlappingFileLockException noLocks) {
                lockedByAnother = false; // a file system without locks: see removeLeftovers
            }
            if (lockedByAnother) {
                throw new IOException("another process locked the new temporary file " + created
                        + " before this run could; " + target + " was not changed: run again");
            }
            checkStillOurs("", "before this run locked it");
            Path named = dir.resolve(base + SUFFIX);
            WRITING.add(named);
            registered = named;
            try {
                // Refuses a file already there (the JDK checks, then renames): under a random name
                // there is none, and the check after the move finds one that came in between.
                Files.move(created, named);
            } catch (NoSuchFileException e) {
                throw notOurs("", "before this run locked it");
            }
            temp = named;
            checkStillOurs("", "before this run locked it");
        }

        static FileAttribute<?>[] ownerOnly(Path dir) {
            boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
            return posix ? new FileAttribute<?>[] {OWNER_ONLY} : new FileAttribute<?>[0];
        }

        /**
         * Whether the file under the temporary name is the one this run created: false if it is
         * gone, is another, or cannot be looked at. Never opens it: closing a second channel to
         * the file would release this JVM's lock on it.
         */
        private boolean isOurs() {
            if (!identified) {
                return false;
            }
            try {
                BasicFileAttributes now = Files.readAttributes(temp, BasicFileAttributes.class,
                        LinkOption.NOFOLLOW_LINKS);
                return fileKey == null ? now.isRegularFile() : fileKey.equals(now.fileKey());
            } catch (IOException e) {
                return false;
            }
        }

        /**
         * Throws unless the file under the temporary name is the one this run created: {@code
         * lead} says what failed (or is empty when the caller says it), {@code when} when the
         * file was changed.
         */
        private void checkStillOurs(String lead, String when) throws IOException {
            if (!isOurs()) {
                throw notOurs(lead, when);
            }
        }

        private IOException notOurs(String lead, String when) {
            return new IOException(lead + "the temporary file " + temp + " was removed or replaced by another process "
                    + when + " (is another run writing the same file?): " + target + " was not changed; let one run at"
                    + " a time write it, then run again");
        }

        /**
         * Makes the output visible: syncs the temporary file, publishes it as OUT (without
         * {@code replace}, only if OUT does not exist) and syncs the directory.
         *
         * @throws FileAlreadyExistsException without {@code replace}, if OUT exists: it is left
         *     as it is, and {@link #close()} removes the temporary file
         * @throws IOException if the file under the temporary name is not the one this run wrote
         *     (another process removed or replaced it): OUT is left as it is
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
            String publishing = "cannot publish " + target + ": ";
            checkStillOurs(publishing, "while this run wrote it"); // before its mode is changed, below
            if (replace) {
                keepPermissions(temp, target);
            }
            channel.force(true); // the bytes (and the mode) on the disk before the name
            TestHooks.reached(TestHooks.Step.SYNCED, target);
            checkStillOurs(publishing, "while this run wrote it"); // the last look before the name
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
                // in another process removes once this one has ended.
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

        /**
         * Removes the temporary file if the output was not committed and the file is still this
         * run's, and the shutdown hook.
         */
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
                    if (temp != null && !committed && isOurs()) {
                        Files.deleteIfExists(temp); // before its lock goes with the channel
                    }
                } finally {
                    if (registered != null) {
                        WRITING.remove(registered);
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
                if (isOurs()) {
                    Files.deleteIfExists(temp);
                    err.println("sealpipe: interrupted: removed the unfinished " + temp + "; " + target
                            + " was not changed");
                } else {
                    err.println("sealpipe: interrupted: " + target + " was not changed");
                }
            } catch (IOException e) {
                err.println("sealpipe: interrupted: could not remove the unfinished " + temp + ": " + describe(e));
            }
            err.flush();
        }

        /**
         * Removes the temporary files that runs writing {@code name} left in {@code dir} when they
         * were killed (SIGKILL) or the machine stopped, and only those that are certainly not a
         * running process's: {@code .NAME.sealpipe-PID-RANDOM.tmp} (or, as earlier versions named
         * them, {@code -PID.tmp} and {@code -PID-N.tmp}) whose PID is not this process's and no
         * running process's here, and that no process holds locked (a writer locks its file before
         * it has that name). One line on {@code err} for each file removed, and for each file left
         * because it may be a running process's: one with this process's PID that this JVM is not
         * writing (a run with the same number in another PID namespace, a container, or on another
         * NFS client, may be writing it), or one on a file system without locks whose process is
         * not running here (it may be running elsewhere). A file that is locked, or cannot be
         * checked or removed, is left silently: the output goes on.
         */
        static void removeLeftovers(Path dir, String name, PrintWriter err) {
            String prefix = "." + name + MARK;
            Path out = dir.resolve(name);
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
                    // Our own number says nothing of a process in another PID namespace or on another
                    // machine: only the lock tells. A .tmp file is locked from before it has its name
                    // (it is made as .new, locked, then renamed), so an unlocked one is a dead run's.
                    if (pid != self && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                        continue; // it may be writing it still
                    }
                    switch (removeIfUnlocked(file)) {
                        case REMOVED -> {
                            err.println("sealpipe: removed " + file + ", left by an earlier run that did not finish"
                                    + (pid == self ? " (it has this process's number, but no process holds its lock)"
                                            : " (process " + pid + " is no longer running)"));
                            err.flush();
                        }
                        case NO_LOCKS -> left(err, file, out, (pid == self ? "it has this process's number"
                                : "process " + pid + " is not running here") + ", but this file system has no locks to"
                                + " show whether a run elsewhere (in another container or on another machine) is still"
                                + " writing it");
                        case KEPT -> {
                            // Locked by its writer elsewhere, or not to be checked or removed.
                        }
                    }
                }
            } catch (IOException | DirectoryIteratorException e) {
                // A directory that cannot be listed: the output will say if it cannot be written.
            }
        }

        private static void left(PrintWriter err, Path file, Path out, String why) {
            err.println("sealpipe: left " + file + ": " + why + "; if no run is writing " + out
                    + ", remove it (it may hold decrypted data or a key)");
            err.flush();
        }

        /** What {@link #removeIfUnlocked} did. */
        private enum Leftover { REMOVED, KEPT, NO_LOCKS }

        /**
         * Removes a regular file that no process holds locked; left, with {@code NO_LOCKS}, if the
         * file system cannot say.
         */
        private static Leftover removeIfUnlocked(Path file) {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return Leftover.KEPT;
            }
            try (FileChannel c = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    if (c.tryLock(0, Long.MAX_VALUE, true) == null) {
                        return Leftover.KEPT; // a writer in another PID namespace or on another machine
                    }
                } catch (OverlappingFileLockException e) {
                    return Leftover.KEPT; // this JVM has it locked
                } catch (IOException noLocks) {
                    return Leftover.NO_LOCKS;
                }
                Files.delete(file);
                return Leftover.REMOVED;
            } catch (IOException e) {
                return Leftover.KEPT;
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
