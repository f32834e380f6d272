package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The keystore password asked on the terminal (a pseudo-terminal from util-linux's
 * {@code script}), with standard output redirected, as in {@code decrypt ... > out}: the JDK has
 * no Console then, so the prompt goes through /dev/tty.
 */
class KeystorePromptTest {
    private static final String PASSWORD = "typed at the prompt";

    @TempDir
    Path dir;

    @Test
    void thePasswordIsAskedOnTheTerminalWhenOutputIsRedirected() throws Exception {
        assertTrue(new File("/usr/bin/script").canExecute(), "util-linux's script (Debian: bsdutils) is needed");
        Path keystore = dir.resolve("keys.p12");
        Path password = Files.writeString(dir.resolve("password"), PASSWORD + "\n");
        assertEquals(0, CliRun.run("keygen", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString()).code());
        Path in = Files.writeString(dir.resolve("plain"), "asked for on the terminal\n");
        assertEquals(0, CliRun.run("encrypt", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString(), in.toString(), dir.resolve("sealed").toString()).code());

        List<String> cli = ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "decrypt", "--keystore", keystore.toString(), "--key-alias", "a", dir.resolve("sealed").toString());
        String command = cli.stream().map(a -> "'" + a.replace("'", "'\\''") + "'").collect(Collectors.joining(" "))
                + " > '" + dir.resolve("out") + "'";
        Process p = new ProcessBuilder("script", "-qec", command, "/dev/null").redirectErrorStream(true).start();
        p.getOutputStream().write((PASSWORD + "\n").getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String shown = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), shown);
        assertTrue(shown.contains("Password of the keystore:"), shown);
        assertEquals("asked for on the terminal\n", Files.readString(dir.resolve("out")));
    }

    /**
     * Ctrl-C at the prompt: the JVM exits 130 and the terminal has echo on again (without that,
     * what the user types next into the shell is not shown). The shell running the command
     * ignores SIGINT and prints the terminal's settings after; the JVM gets SIGINT's default
     * back from GNU env (a shell started in the background would hand down SIGINT ignored).
     */
    @Test
    // a safety net only: reading the pty blocks, which only a timeout on another thread can end
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void ctrlCAtThePromptLeavesEchoOn() throws Exception {
        assertTrue(new File("/usr/bin/script").canExecute(), "util-linux's script (Debian: bsdutils) is needed");
        Assumptions.assumeTrue(new ProcessBuilder("env", "--default-signal=INT", "true").start().waitFor() == 0,
                "GNU env with --default-signal (coreutils 8.31 or later)");
        Path keystore = dir.resolve("keys.p12");
        Path password = Files.writeString(dir.resolve("password"), PASSWORD + "\n");
        assertEquals(0, CliRun.run("keygen", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString()).code());
        Path in = Files.writeString(dir.resolve("plain"), "never decrypted\n");
        assertEquals(0, CliRun.run("encrypt", "--keystore", keystore.toString(), "--key-alias", "a", "--password-file",
                password.toString(), in.toString(), dir.resolve("sealed").toString()).code());

        List<String> cli = new ArrayList<>(List.of("env", "--default-signal=INT"));
        cli.addAll(ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "decrypt", "--keystore", keystore.toString(), "--key-alias", "a", dir.resolve("sealed").toString()));
        String command = "trap '' INT; " + cli.stream().map(a -> "'" + a.replace("'", "'\\''") + "'")
                .collect(Collectors.joining(" ")) + " > '" + dir.resolve("out") + "'; echo \"exit $?\"; stty -a";
        Process p = new ProcessBuilder("script", "-qec", command, "/dev/null").redirectErrorStream(true).start();
        try {
            InputStream terminal = p.getInputStream();
            ByteArrayOutputStream shown = new ByteArrayOutputStream();
            String prompt = "Password of the keystore: ";
            while (!shown.toString(StandardCharsets.UTF_8).contains(prompt)) {
                int b = terminal.read(); // the prompt is written once echo is off
                assertTrue(b >= 0, "no prompt: " + shown.toString(StandardCharsets.UTF_8));
                shown.write(b);
            }
            p.getOutputStream().write(3); // Ctrl-C: the terminal sends SIGINT to the JVM
            p.getOutputStream().flush();
            shown.write(terminal.readAllBytes());
            assertTrue(p.waitFor(120, TimeUnit.SECONDS));
            String all = shown.toString(StandardCharsets.UTF_8);
            assertTrue(all.contains("exit 130"), "the JVM ends on SIGINT: " + all);
            assertTrue(Pattern.compile("(^|\\s)echo(\\s|$)", Pattern.MULTILINE).matcher(all).find()
                    && !Pattern.compile("(^|\\s)-echo(\\s|$)", Pattern.MULTILINE).matcher(all).find(),
                    "echo is on after the JVM ended: " + all);
        } finally {
            p.destroyForcibly();
        }
    }
}
