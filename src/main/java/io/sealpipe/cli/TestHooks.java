package io.sealpipe.cli;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Points in the CLI's file writing where a test can stop a command or make it fail, to prove
 * what happens when another process acts at that moment or a write fails. Nothing is installed
 * outside the tests: {@link #reached} then does nothing.
 */
final class TestHooks {
    private TestHooks() {}

    /** Where a command is. */
    enum Step {
        /** keygen is about to take the keystore's lock; the path is the keystore. */
        KEYSTORE_LOCKING,
        /** keygen found the keystore's lock held and is about to wait for it; the path is the keystore. */
        KEYSTORE_WAITING,
        /** keygen has read the keystore (or found none), under its lock; the path is the keystore. */
        KEYSTORE_READ,
        /**
         * An output's temporary file is created, not yet locked and not yet given its {@code .tmp}
         * name; the path is the temporary file.
         */
        CREATED,
        /** An output's bytes are in its temporary file, not yet synced; the path is the temporary file. */
        WRITTEN,
        /** The temporary file is synced and about to be published as the output; the path is the output. */
        SYNCED,
        /** The output is published; its directory is not yet synced. The path is the output. */
        PUBLISHED,
        /** The output's directory is synced. The path is the output. */
        DIRECTORY_SYNCED,
        /** rewrap has copied a file behind its new envelope, not yet renamed over it; the path is the file's name. */
        REWRAP_COPIED;
    }

    /** A test's action at a step; it may throw to inject a failure there. */
    interface Hook {
        void reached(Step step, Path path) throws IOException;
    }

    private static volatile Hook hook;

    /** Installs {@code h} (null removes it); tests only, and they remove it when done. */
    static void install(Hook h) {
        hook = h;
    }

    static void reached(Step step, Path path) throws IOException {
        Hook h = hook;
        if (h != null) {
            h.reached(step, path);
        }
    }
}
