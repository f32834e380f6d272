package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import io.sealpipe.Keys;
import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.cli.TestHooks.Step;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two keygens adding entries to one keystore at the same moment, in one JVM and in two: the
 * first stops (a test hook) right after it has read the keystore, the second runs while it is
 * stopped, then the first goes on. Both keys must be in the keystore afterwards: keygen holds
 * the keystore's lock from before it reads the keystore until its new version is in place.
 * The second is let go on once it waits for the lock, or (without a lock) once it has finished.
 */
class KeystoreLockTest {
    private static final String PASSWORD = "correct horse battery staple";
    private static final long SAFETY_NET_SECONDS = 120; // never reached unless the code hangs

    @TempDir
    Path dir;

    @AfterEach
    void removeHook() {
        TestHooks.install(null);
    }

    private String[] keygen(Path keystore, String alias) throws IOException {
        Path password = Files.writeString(dir.resolve("password"), PASSWORD + "\n");
        return new String[] {"keygen", "--keystore", keystore.toString(), "--key-alias", alias, "--password-file",
            password.toString()};
    }

    /** A keystore that exists (with one entry) before the two run, or one that they make. */
    private Path keystore(boolean exists) throws IOException {
        Path keystore = dir.resolve("keys.p12");
        if (exists) {
            assertEquals(0, CliRun.run(keygen(keystore, "earlier")).code());
        }
        return keystore;
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(SAFETY_NET_SECONDS, TimeUnit.SECONDS), "the other keygen did not get there");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest(name = "keystore exists before: {0}")
    @ValueSource(booleans = {true, false})
    void twoKeygensInOneJvmKeepBothKeys(boolean exists) throws Exception {
        Path keystore = keystore(exists);
        CountDownLatch firstHasRead = new CountDownLatch(1);
        CountDownLatch secondWaitsOrIsDone = new CountDownLatch(1);
        CountDownLatch firstGoesOn = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean secondReadTooEarly = new java.util.concurrent.atomic.AtomicBoolean();
        TestHooks.install((step, path) -> {
            String thread = Thread.currentThread().getName();
            if (thread.equals("first") && step == Step.KEYSTORE_READ) {
                firstHasRead.countDown();
                await(firstGoesOn);
            } else if (thread.equals("second") && step == Step.KEYSTORE_WAITING) {
                secondWaitsOrIsDone.countDown();
            } else if (thread.equals("second") && step == Step.KEYSTORE_READ && firstGoesOn.getCount() > 0) {
                secondReadTooEarly.set(true); // the first still holds the lock: the lock did not hold this one
                secondWaitsOrIsDone.countDown();
            }
        });
        Result[] results = new Result[2];
        String[] first = keygen(keystore, "a");
        String[] second = keygen(keystore, "b");
        Thread one = new Thread(() -> results[0] = CliRun.run(first), "first");
        Thread two = new Thread(() -> {
            try {
                results[1] = CliRun.run(second);
            } finally {
                secondWaitsOrIsDone.countDown();
            }
        }, "second");
        one.start();
        await(firstHasRead);
        two.start();
        await(secondWaitsOrIsDone);
        firstGoesOn.countDown();
        one.join();
        two.join();

        assertFalse(secondReadTooEarly.get(), "the second keygen read the keystore while the first held its lock");
        assertEquals(0, results[0].code(), results[0].err());
        assertEquals(0, results[1].code(), results[1].err());
        assertEntries(keystore, exists);
    }

    @ParameterizedTest(name = "keystore exists before: {0}")
    @ValueSource(booleans = {true, false})
    void twoKeygensInTwoJvmsKeepBothKeys(boolean exists) throws Exception {
        Path keystore = keystore(exists);
        Process first = child("pause-after-read", keygen(keystore, "a"), "first");
        Process second = null;
        try {
            BufferedReader firstSays = reader(first);
            assertEquals("read", firstSays.readLine(), "the first stops after reading: " + errors("first"));
            second = child("announce-waiting", keygen(keystore, "b"), "second");
            String secondSays = reader(second).readLine(); // "waiting": the first holds the lock
            assertEquals("waiting", secondSays,
                    "the second keygen waits for the lock the first holds: " + errors("second"));
            OutputStream goOn = first.getOutputStream();
            goOn.write('\n');
            goOn.flush();
            assertTrue(first.waitFor(SAFETY_NET_SECONDS, TimeUnit.SECONDS));
            assertTrue(second.waitFor(SAFETY_NET_SECONDS, TimeUnit.SECONDS));
            assertEquals(0, first.exitValue(), errors("first"));
            assertEquals(0, second.exitValue(), errors("second"));
        } finally {
            first.destroyForcibly();
            if (second != null) {
                second.destroyForcibly();
            }
        }
        assertEntries(keystore, exists);
    }

    private Process child(String mode, String[] args, String name) throws IOException {
        List<String> command = ChildJvm.command("-cp", System.getProperty("java.class.path"),
                HookedKeygenChild.class.getName(), mode);
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(dir.resolve(name + ".err").toFile()).start();
    }

    private static BufferedReader reader(Process p) {
        return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    }

    private String errors(String name) throws IOException {
        Path file = dir.resolve(name + ".err");
        return Files.exists(file) ? Files.readString(file) : "";
    }

    private static void assertEntries(Path keystore, boolean exists) throws Exception {
        KeyStore store = Keys.loadKeyStore(keystore, PASSWORD.toCharArray());
        List<String> aliases = new ArrayList<>(java.util.Collections.list(store.aliases()));
        aliases.sort(null);
        assertEquals(exists ? List.of("a", "b", "earlier") : List.of("a", "b"), aliases, "every key is kept");
    }
}
