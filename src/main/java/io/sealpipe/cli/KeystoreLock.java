package io.sealpipe.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock that makes keygens adding entries to one keystore take turns, so that none writes
 * back a keystore read before another's entry was added (and loses that entry). Held from
 * before the keystore is read until its new version is in place.
 *
 * <p>Two locks, taken in this order: a {@link ReentrantLock} per keystore for the threads of
 * this JVM, then an exclusive {@link FileChannel#lock() file lock} on {@code KEYSTORE.lock}
 * beside the keystore, which other processes (sealpipe keygens) wait for. The file lock alone
 * would not do within one JVM: it belongs to the whole process, and a second one taken in the
 * same JVM throws {@code OverlappingFileLockException} instead of waiting. The lock file stays
 * after use, empty and readable by its owner only: removing it would let a process that opened
 * it before the removal and one that created it anew both hold "the" lock. It is opened without
 * following a symbolic link ({@code NOFOLLOW_LINKS}): a link in its place, to a file anywhere,
 * is refused with a message that says to remove it, and the file it points to is neither created
 * nor locked.
 *
 * <p>The keystore's path should be its real path (symbolic links resolved), so that two names
 * for one keystore take one lock. Closed by the thread that took it.
 */
final class KeystoreLock implements AutoCloseable {
    private static final ConcurrentHashMap<Path, ReentrantLock> IN_THIS_JVM = new ConcurrentHashMap<>();

    private final ReentrantLock threads;
    private final FileChannel file;

    private KeystoreLock(ReentrantLock threads, FileChannel file) {
        this.threads = threads;
        this.file = file;
    }

    /**
     * Takes the lock of {@code keystore}, waiting for another keygen that holds it (and saying
     * so on {@code err}).
     */
    static KeystoreLock take(Path keystore, PrintWriter err) throws IOException {
        TestHooks.reached(TestHooks.Step.KEYSTORE_LOCKING, keystore);
        Path lockFile = keystore.resolveSibling(keystore.getFileName() + ".lock");
        ReentrantLock threads = IN_THIS_JVM.computeIfAbsent(lockFile, f -> new ReentrantLock());
        if (!threads.tryLock()) {
            waiting(keystore, lockFile, err);
            threads.lock();
        }
        boolean taken = false;
        try {
            // Never through a symbolic link: keygen would create, or lock, the file it points to.
            FileChannel file = FileChannel.open(lockFile, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS), Io.Output.ownerOnly(lockFile.getParent()));
            try {
                FileLock lock = file.tryLock();
                if (lock == null) {
                    waiting(keystore, lockFile, err);
                    file.lock();
                }
                KeystoreLock held = new KeystoreLock(threads, file);
                taken = true;
                return held;
            } finally {
                if (!taken) {
                    file.close(); // an exception or an Error: the file lock goes with the channel
                }
            }
        } catch (IOException e) {
            throw new IOException("cannot lock " + keystore + " with " + lockFile + ": " + reason(lockFile, e), e);
        } finally {
            if (!taken) {
                threads.unlock(); // whatever was thrown, an Error too: this JVM's other keygens go on
            }
        }
    }

    /** Why the lock file could not be opened or locked: what is wrong, and what to do if a link is. */
    private static String reason(Path lockFile, IOException e) {
        if (!Files.isSymbolicLink(lockFile)) {
            return Io.describe(e);
        }
        String to;
        try {
            to = " (to " + Files.readSymbolicLink(lockFile) + ")";
        } catch (IOException unreadable) {
            to = "";
        }
        return "it is a symbolic link" + to + ", which keygen does not follow: remove the link (keygen makes the lock"
                + " file itself), then run keygen again";
    }

    private static void waiting(Path keystore, Path lockFile, PrintWriter err) throws IOException {
        TestHooks.reached(TestHooks.Step.KEYSTORE_WAITING, keystore);
        err.println("sealpipe: waiting for another keygen to finish with " + keystore + " (it holds " + lockFile + ")");
        err.flush();
    }

    /** Releases both locks. */
    @Override
    public void close() throws IOException {
        try {
            file.close(); // releases the file lock
        } finally {
            threads.unlock();
        }
    }
}
