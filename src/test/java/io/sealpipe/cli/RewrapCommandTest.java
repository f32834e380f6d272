package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.cli.CliRun.Result;
import io.sealpipe.internal.Envelope;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sealpipe rewrap} over envelope files that the sealed file system wrote under a JCEKS
 * keystore's key (Hadoop's default crypto extension): after a roll, {@code --dry-run} changes
 * nothing, a run rewraps every envelope file under the new version with its chunks unchanged
 * and readable, a second run finds them current, other files are skipped, nothing is left behind.
 */
class RewrapCommandTest {
    @TempDir
    Path dir;

    @Test
    void rewrapsEnvelopesUnderTheCurrentVersionWithoutTouchingAChunk() throws Exception {
        URI keystore = EnvelopeFixture.keystoreWithKey(dir);

        Path tree = Files.createDirectories(dir.resolve("tree/sub"));
        Configuration conf = EnvelopeFixture.sealedConf(keystore);
        byte[][] data = new byte[3][];
        String[] names = {"tree/a", "tree/sub/b", "tree/sub/c"};
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            for (int i = 0; i < names.length; i++) {
                data[i] = new byte[20_000 * i + 7];
                new Random(i).nextBytes(data[i]);
                try (OutputStream out = fs.create(new org.apache.hadoop.fs.Path("sfile://" + dir.resolve(names[i])))) {
                    out.write(data[i]);
                }
            }
        }
        Files.writeString(dir.resolve("tree/plain.txt"), "not sealed");
        EnvelopeFixture.roll(keystore);
        byte[][] before = new byte[3][];
        for (int i = 0; i < names.length; i++) {
            before[i] = Files.readAllBytes(dir.resolve(names[i]));
            assertEquals("data@0", Envelope.parse(before[i]).versionName());
        }
        String[] args = {"rewrap", "--key-provider", keystore.toString(), "file://" + dir.resolve("tree")};

        Result dry = CliRun.run(args[0], "--dry-run", args[1], args[2], args[3]);
        assertEquals(0, dry.code(), dry.err());
        assertTrue(dry.out().contains("would rewrap 3, current 0, not envelope files 1, failed 0"), dry.out());
        assertTrue(dry.out().contains("data@0 -> data@1"), dry.out());
        for (int i = 0; i < names.length; i++) {
            assertArrayEquals(before[i], Files.readAllBytes(dir.resolve(names[i])), "a dry run changes nothing");
        }

        Result run = CliRun.run(args);
        assertEquals(0, run.code(), run.err());
        assertTrue(run.out().contains("rewrapped 3, current 0, not envelope files 1, failed 0"), run.out());
        for (int i = 0; i < names.length; i++) {
            byte[] after = Files.readAllBytes(dir.resolve(names[i]));
            assertEquals("data@1", Envelope.parse(after).versionName());
            assertEquals(before[i].length, after.length);
            assertArrayEquals(Arrays.copyOfRange(before[i], Envelope.LENGTH, before[i].length),
                    Arrays.copyOfRange(after, Envelope.LENGTH, after.length), "every chunk as it was");
            assertFalse(Arrays.equals(Arrays.copyOf(before[i], Envelope.LENGTH), Arrays.copyOf(after, Envelope.LENGTH)));
        }
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            for (int i = 0; i < names.length; i++) {
                try (InputStream in = fs.open(new org.apache.hadoop.fs.Path("sfile://" + dir.resolve(names[i])))) {
                    assertArrayEquals(data[i], in.readAllBytes(), names[i] + " reads after the rewrap");
                }
            }
        }
        try (Stream<Path> files = Files.walk(dir.resolve("tree"))) {
            assertTrue(files.noneMatch(p -> p.getFileName().toString().contains("sealpipe-rewrap")), "no leftovers");
        }

        Result again = CliRun.run(args);
        assertEquals(0, again.code(), again.err());
        assertTrue(again.out().contains("rewrapped 0, current 3, not envelope files 1, failed 0"), again.out());
    }

    /**
     * A rewrap killed (SIGKILL) after copying a file, before its rename: every file reads, the
     * ones done rewrapped and the others as they were, and only a hidden copy is left; a second
     * run finishes the work.
     */
    @Test
    void aKilledRewrapLeavesEveryFileReadable() throws Exception {
        URI keystore = EnvelopeFixture.keystoreWithKey(dir);
        Configuration conf = EnvelopeFixture.sealedConf(keystore);
        Files.createDirectories(dir.resolve("k"));
        byte[][] data = new byte[3][];
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            for (int i = 0; i < 3; i++) {
                data[i] = new byte[30_000 + i];
                new Random(10 + i).nextBytes(data[i]);
                try (OutputStream out = fs.create(new org.apache.hadoop.fs.Path("sfile://" + dir.resolve("k/f" + i)))) {
                    out.write(data[i]);
                }
            }
        }
        EnvelopeFixture.roll(keystore);

        java.util.List<String> command = io.sealpipe.ChildJvm.command("-cp", System.getProperty("java.class.path"),
                HookedRewrapChild.class.getName(), "stop-at", "f1", "rewrap", "--key-provider", keystore.toString(),
                "file://" + dir.resolve("k"));
        Process child = new ProcessBuilder(command).redirectError(dir.resolve("child.err").toFile()).start();
        try {
            String said = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8)).lines().filter(l -> l.startsWith("copied")).findFirst()
                    .orElse("(nothing: " + Files.readString(dir.resolve("child.err")) + ")");
            assertEquals("copied f1", said);
        } finally {
            child.destroyForcibly(); // SIGKILL, between the copy of f1 and its rename
            child.waitFor();
        }
        java.util.Map<String, String> versions = new java.util.TreeMap<>();
        for (int i = 0; i < 3; i++) {
            versions.put("f" + i, Envelope.parse(Files.readAllBytes(dir.resolve("k/f" + i))).versionName());
        }
        assertEquals("data@0", versions.get("f1"), "killed before its rename: as it was");
        try (Stream<Path> files = Files.list(dir.resolve("k"))) {
            assertTrue(files.anyMatch(p -> p.getFileName().toString().startsWith(".f1.sealpipe-rewrap-")
                    && !p.toString().endsWith(".crc")), "the hidden copy is what is left");
        }
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            for (int i = 0; i < 3; i++) {
                try (InputStream in = fs.open(new org.apache.hadoop.fs.Path("sfile://" + dir.resolve("k/f" + i)))) {
                    assertArrayEquals(data[i], in.readAllBytes(), "f" + i + " (" + versions.get("f" + i) + ") reads");
                }
            }
        }
        // A rename that deletes the file first (the local file system's and object stores'), cut
        // between its two steps: only the copy is left, and the next run puts it back.
        java.nio.file.Path copy;
        try (Stream<Path> files = Files.list(dir.resolve("k"))) {
            copy = files.filter(p -> p.getFileName().toString().startsWith(".f1.sealpipe-rewrap-")
                    && !p.toString().endsWith(".crc")).findFirst().orElseThrow();
        }
        Files.delete(dir.resolve("k/f1"));
        Files.deleteIfExists(dir.resolve("k/.f1.crc"));
        Result again = CliRun.run("rewrap", "--key-provider", keystore.toString(), "file://" + dir.resolve("k"));
        assertEquals(0, again.code(), again.err());
        assertTrue(again.out().contains("restored " + "file:" + dir.resolve("k/f1")), again.out());
        assertFalse(Files.exists(copy), "the copy became the file");
        for (int i = 0; i < 3; i++) {
            assertEquals("data@1", Envelope.parse(Files.readAllBytes(dir.resolve("k/f" + i))).versionName());
        }
        try (FileSystem fs = FileSystem.get(URI.create("sfile:///"), conf)) {
            try (InputStream in = fs.open(new org.apache.hadoop.fs.Path("sfile://" + dir.resolve("k/f1")))) {
                assertArrayEquals(data[1], in.readAllBytes(), "f1, restored from the copy, reads");
            }
        }
        try (Stream<Path> files = Files.list(dir.resolve("k"))) {
            assertTrue(files.noneMatch(p -> p.getFileName().toString().contains("sealpipe-rewrap")), "no copy left");
        }
    }
}
