package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The progress bar of {@code encrypt}: seen when standard error is a terminal (a pseudo-terminal
 * from util-linux's {@code script}), absent on a pipe and with {@code --quiet}.
 */
class ProgressBarTest {
    @TempDir
    Path dir;

    private List<String> cli(String... args) {
        List<String> command = ChildJvm.command("-cp", System.getProperty("java.class.path"), Main.class.getName());
        command.addAll(List.of(args));
        return command;
    }

    private static String quote(List<String> command) {
        return command.stream().map(a -> "'" + a.replace("'", "'\\''") + "'").collect(Collectors.joining(" "));
    }

    /** Runs {@code command}, its standard error on a pipe; returns that standard error. */
    private static String onAPipe(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        p.getOutputStream().close();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), err);
        return err;
    }

    /** Runs {@code command} on a pseudo-terminal; returns what the terminal showed. */
    private static String onATerminal(List<String> command) throws Exception {
        List<String> script = new ArrayList<>(List.of("script", "-qec", quote(command), "/dev/null"));
        Process p = new ProcessBuilder(script).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String shown = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), shown);
        return shown;
    }

    @Test
    void aBarOnATerminalAndNoneOnAPipeOrWhenQuiet() throws Exception {
        assertTrue(new File("/usr/bin/script").canExecute(), "util-linux's script (Debian: bsdutils) is needed");
        byte[] plain = new byte[24 << 20];
        new Random(4).nextBytes(plain);
        Path in = Files.write(dir.resolve("plain"), plain);
        Path key = dir.resolve("key");
        Files.writeString(key, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");

        String shown = onATerminal(cli("encrypt", "--key-file", key.toString(), in.toString(), dir.resolve("a").toString()));
        assertTrue(shown.contains("encrypt") && shown.contains("%") && shown.contains("MB"), "a bar: " + shown);

        String piped = onAPipe(cli("encrypt", "--key-file", key.toString(), in.toString(), dir.resolve("b").toString()));
        assertFalse(piped.contains("%") || piped.contains("MB"), "no bar on a pipe: " + piped);

        String quiet = onATerminal(cli("encrypt", "--quiet", "--key-file", key.toString(), in.toString(),
                dir.resolve("c").toString()));
        assertFalse(quiet.contains("%") || quiet.contains("MB"), "no bar with --quiet: " + quiet);
    }

    @Test
    void aBashCompletionScriptNamesTheCommands() {
        CliRun.Result r = CliRun.run("generate-completion");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("complete -F") && r.out().contains("keygen") && r.out().contains("inspect"), r.out());
    }
}
