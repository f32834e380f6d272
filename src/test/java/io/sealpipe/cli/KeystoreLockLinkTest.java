package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.cli.CliRun.Result;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A {@code KEYSTORE.lock} that is a symbolic link: keygen does not follow it (it would create
 * or lock the file the link points to, anywhere the user can write), refuses with one line that
 * names the lock file and says to remove the link, and leaves the link's target as it was (or
 * absent), the link itself and the keystore too.
 */
class KeystoreLockLinkTest {
    private static final String TARGET_CONTENT = "somebody else's file\n";

    @TempDir
    Path dir;

    @ParameterizedTest(name = "the link's target exists: {0}")
    @ValueSource(booleans = {true, false})
    void aLockFileThatIsASymbolicLinkIsRefused(boolean targetExists) throws Exception {
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Path target = elsewhere.resolve("target");
        FileTime modified = null;
        if (targetExists) {
            Files.writeString(target, TARGET_CONTENT);
            modified = FileTime.fromMillis(1_000_000_000_000L); // a time no write by this test can give it
            Files.setLastModifiedTime(target, modified);
        }
        Path keys = Files.createDirectory(dir.resolve("keys"));
        Path keystore = keys.resolve("keys.p12");
        Path lock = Files.createSymbolicLink(keys.resolve("keys.p12.lock"), target);
        Path password = Files.writeString(dir.resolve("password"), "correct horse battery staple\n");

        Result r = CliRun.run("keygen", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString());

        assertEquals(1, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
        assertTrue(r.err().contains(keys.toRealPath().resolve("keys.p12.lock") + ": it is a symbolic link"), r.err());
        assertTrue(r.err().contains("remove the link"), r.err());
        if (targetExists) {
            assertEquals(TARGET_CONTENT, Files.readString(target), "the link's target as it was");
            assertEquals(modified, Files.getLastModifiedTime(target), "the link's target as it was");
        } else {
            assertFalse(Files.exists(target, LinkOption.NOFOLLOW_LINKS), "no file made where the link points");
        }
        assertTrue(Files.isSymbolicLink(lock), "the link is left for the user to look at");
        assertFalse(Files.exists(keystore), "no keystore");
    }
}
