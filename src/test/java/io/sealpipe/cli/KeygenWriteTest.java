package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.Keys;
import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.cli.TestHooks.Step;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How keygen writes a key file or a keystore: into a temporary file that is synced before it
 * is published and whose directory is synced after, so a crash leaves the old state or the new
 * one; a key file that another program makes meanwhile is never replaced; and a write that fails
 * (a full disk, here a failure injected by a test hook once the
 * bytes are written) leaves no file behind: no key file, the keystore as it was, no temporary
 * file.
 */
class KeygenWriteTest {
    private static final String PASSWORD = "correct horse battery staple";

    @TempDir
    Path dir;

    @AfterEach
    void removeHook() {
        TestHooks.install(null);
    }

    private static void failOnceWritten() {
        TestHooks.install((step, path) -> {
            if (step == Step.WRITTEN) {
                throw new IOException("No space left on device (injected)");
            }
        });
    }

    private Path password() throws IOException {
        return Files.writeString(dir.resolve("password"), PASSWORD + "\n");
    }

    private String[] keygenInto(Path keystore, String alias) throws IOException {
        return new String[] {"keygen", "--keystore", keystore.toString(), "--key-alias", alias, "--password-file",
            password().toString()};
    }

    @Test
    void aFailedWriteLeavesNoKeyFile() throws Exception {
        failOnceWritten();
        Path out = dir.resolve("key.hex");
        Result r = CliRun.run("keygen", "--out", out.toString());
        assertEquals(1, r.code(), r.err());
        assertEquals(List.of(), files(), "no key file, no temporary file");
        assertTrue(r.err().startsWith("sealpipe: cannot write the --out file: No space left on device (injected)"),
                r.err());
    }

    @Test
    void aFailedWriteLeavesTheKeystoreAsItWas() throws Exception {
        Path keystore = dir.resolve("keys.p12");
        assertEquals(0, CliRun.run(keygenInto(keystore, "a")).code());
        byte[] before = Files.readAllBytes(keystore);
        List<String> filesBefore = files();

        failOnceWritten();
        Result r = CliRun.run(keygenInto(keystore, "b"));
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("No space left on device (injected)"), r.err());
        assertArrayEquals(before, Files.readAllBytes(keystore), "the keystore as it was");
        assertEquals(filesBefore, files(), "no temporary file");

        Path fresh = dir.resolve("new.p12");
        Result none = CliRun.run(keygenInto(fresh, "a"));
        assertEquals(1, none.code(), none.err());
        assertFalse(Files.exists(fresh), "no keystore");
        assertEquals(filesBefore, files().stream().filter(f -> !f.equals("new.p12.lock")).toList(),
                "no temporary file");
    }

    @Test
    void aKeyFileMadeMeanwhileIsNeverReplaced() throws Exception {
        Path out = dir.resolve("key.hex");
        OutAppearsMeanwhileTest.makeBeforePublishing(out);
        Result r = CliRun.run("keygen", "--out", out.toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("the --out file exists: keygen never overwrites a key"), r.err());
        assertEquals(OutAppearsMeanwhileTest.MEANWHILE, Files.readString(out));
        assertEquals(List.of("key.hex"), files(), "no temporary file");
    }

    @Test
    void theKeyFileIsSyncedBeforeItIsPublishedAndItsDirectoryAfter() throws Exception {
        List<Step> steps = recordSteps();
        Path out = dir.resolve("key.hex");
        assertEquals(0, CliRun.run("keygen", "--out", out.toString()).code());
        assertEquals(List.of(Step.CREATED, Step.WRITTEN, Step.SYNCED, Step.PUBLISHED, Step.DIRECTORY_SYNCED), steps);
    }

    @Test
    void theKeystoreIsReadUnderItsLockAndSyncedBeforeItIsPublished() throws Exception {
        Path keystore = dir.resolve("keys.p12");
        List<Step> steps = recordSteps();
        assertEquals(0, CliRun.run(keygenInto(keystore, "a")).code());
        List<Step> expected = List.of(Step.KEYSTORE_LOCKING, Step.KEYSTORE_READ, Step.CREATED, Step.WRITTEN,
                Step.SYNCED, Step.PUBLISHED, Step.DIRECTORY_SYNCED);
        assertEquals(expected, steps, "a new keystore");
        steps.clear();
        assertEquals(0, CliRun.run(keygenInto(keystore, "b")).code());
        assertEquals(expected, steps, "an entry added");
        KeyStore store = Keys.loadKeyStore(keystore, PASSWORD.toCharArray());
        assertTrue(store.containsAlias("a") && store.containsAlias("b"));
    }

    private static List<Step> recordSteps() {
        List<Step> steps = Collections.synchronizedList(new ArrayList<>());
        TestHooks.install((step, path) -> steps.add(step));
        return steps;
    }

    /** The directory's files but the password file, by name. */
    private List<String> files() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(f -> !f.equals("password")).sorted().toList();
        }
    }
}
