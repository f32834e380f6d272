package io.sealpipe.cli;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static org.junit.jupiter.api.Assertions.fail;

import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the tests share that stop {@code encrypt} or {@code decrypt} in a child JVM in the middle
 * of writing {@code DIR/out.bin} ({@link InterruptCommandTest}, {@link LeftoverTempFileTest}): the
 * key, the input for each command, and the wait for the child's temporary file.
 */
final class MidStreamRunFixture {
    static final String KEY = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
    private static final long SAFETY_NET_NANOS = TimeUnit.SECONDS.toNanos(60);

    private MidStreamRunFixture() {}

    /** The input of {@code command} for {@code plain}: itself to encrypt, sealed under {@link #KEY} to decrypt. */
    static byte[] input(String command, byte[] plain) throws IOException {
        if (command.equals("encrypt")) {
            return plain;
        }
        ByteArrayOutputStream sealed = new ByteArrayOutputStream();
        try (OutputStream s = GcmStreams.builder().key(HexFormat.of().parseHex(KEY)).build().encrypt(sealed)) {
            s.write(plain);
        }
        return sealed.toByteArray();
    }

    /**
     * Waits (inotify, no sleeping) until the child {@code p} has created its temporary file
     * {@code .out.bin.*.tmp} in {@code dir}, and returns it; fails with the child's standard
     * error if it exits first.
     */
    static Path awaitTemporaryFile(Path dir, Process p, Path errFile) throws IOException, InterruptedException {
        long start = System.nanoTime();
        try (WatchService watcher = dir.getFileSystem().newWatchService()) {
            dir.register(watcher, ENTRY_CREATE);
            while (true) {
                Optional<Path> temp = temporaryFile(dir);
                if (temp.isPresent()) {
                    return temp.get();
                }
                if (!p.isAlive()) {
                    fail("the child exited " + p.exitValue() + " before creating its temporary file: "
                            + Files.readString(errFile));
                }
                if (System.nanoTime() - start > SAFETY_NET_NANOS) {
                    fail("no temporary file after 60 s");
                }
                WatchKey key = watcher.poll(1, TimeUnit.SECONDS); // an event, or a look at p.isAlive()
                if (key != null) {
                    key.pollEvents();
                    key.reset();
                }
            }
        }
    }

    private static Optional<Path> temporaryFile(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith(".out.bin.")
                    && f.getFileName().toString().endsWith(".tmp")).findFirst();
        }
    }
}
