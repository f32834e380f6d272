package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.cli.CliRun.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An OUT that another program makes while a command runs, after the command checked that there
 * was none: without {@code --force} the command never replaces it (exit 2, OUT as the other
 * program left it, no temporary file left); with {@code --force} it does. A test hook makes OUT
 * at the last moment: when the output is synced and about to be published. ({@code keygen
 * --out}: {@link KeygenWriteTest}.)
 */
class OutAppearsMeanwhileTest {
    private static final String KEY = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
    static final String MEANWHILE = "made by another program meanwhile";

    @TempDir
    Path dir;

    @AfterEach
    void removeHook() {
        TestHooks.install(null);
    }

    /** When the command is about to publish {@code out}, another program makes it. */
    static void makeBeforePublishing(Path out) {
        TestHooks.install((step, path) -> {
            if (step == TestHooks.Step.SYNCED && path.equals(out.toAbsolutePath())) {
                Files.writeString(out, MEANWHILE);
            }
        });
    }

    private Path keyFile() throws Exception {
        return Files.write(dir.resolve("key"), HexFormat.of().parseHex(KEY));
    }

    @ParameterizedTest
    @ValueSource(strings = {"encrypt", "decrypt"})
    void withoutForceTheOutMadeMeanwhileIsKept(String command) throws Exception {
        Path plain = Files.writeString(dir.resolve("plain"), "the data\n".repeat(1000));
        Path in = plain;
        if (command.equals("decrypt")) {
            in = dir.resolve("sealed");
            assertEquals(0, CliRun.run("encrypt", "--key-file", keyFile().toString(), plain.toString(), in.toString())
                    .code());
        }
        Path out = dir.resolve("out");
        makeBeforePublishing(out);
        Result r = CliRun.run(command, "--key-file", keyFile().toString(), in.toString(), out.toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("sealpipe: OUT exists (it was made while " + command + " ran): add --force to"
                + " replace it, or choose another name; OUT was left as it is"), r.err());
        assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
        assertEquals(MEANWHILE, Files.readString(out), "OUT is as the other program left it");
        assertNoTemporaryFile();
    }

    @Test
    void withForceTheOutMadeMeanwhileIsReplaced() throws Exception {
        Path in = Files.writeString(dir.resolve("plain"), "the data\n");
        Path out = dir.resolve("out");
        makeBeforePublishing(out);
        Result r = CliRun.run("encrypt", "--force", "--key-file", keyFile().toString(), in.toString(), out.toString());
        assertEquals(0, r.code(), r.err());
        TestHooks.install(null);
        Path back = dir.resolve("back");
        assertEquals(0,
                CliRun.run("decrypt", "--key-file", keyFile().toString(), out.toString(), back.toString()).code());
        assertEquals("the data\n", Files.readString(back));
        assertNoTemporaryFile();
    }

    private void assertNoTemporaryFile() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            List<String> temporary = files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".tmp"))
                    .toList();
            assertEquals(List.of(), temporary, "temporary files left behind");
        }
    }
}
