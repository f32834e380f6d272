package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The AWS SDK is an optional dependency: without it on the class path (Hadoop's client there, as
 * {@code hadoop classpath} gives it), envelope files under Hadoop's key providers still work, and
 * {@code --kms aws} fails saying which jars to add. The command line runs in a child JVM whose
 * class path is this one's without the SDK's jars.
 */
class NoAwsSdkTest {
    @TempDir
    Path dir;

    /** This JVM's test class path without the AWS SDK v2's jars (software.amazon.awssdk). */
    private static String classPathWithoutSdk() {
        String surefire = System.getProperty("surefire.test.class.path");
        String classPath = surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
        List<String> all = Arrays.asList(classPath.split(File.pathSeparator));
        List<String> kept = all.stream().filter(e -> !e.contains(File.separator + "awssdk" + File.separator))
                .collect(Collectors.toList());
        assertTrue(kept.size() < all.size(), "a positive control: the test class path has the SDK's jars to leave out");
        return String.join(File.pathSeparator, kept);
    }

    private CliRun.Result run(String... args) throws Exception {
        List<String> command = ChildJvm.command("-cp", classPathWithoutSdk(), Main.class.getName());
        command.addAll(List.of(args));
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        process.getOutputStream().close();
        boolean ended = process.waitFor(120, TimeUnit.SECONDS);
        if (!ended) {
            process.destroyForcibly();
        }
        assertTrue(ended, "the CLI did not end: " + Files.readString(err));
        return new CliRun.Result(process.exitValue(), Files.readString(out), Files.readString(err));
    }

    @Test
    void hadoopsKmsWorksAndAwsKmsSaysWhatToAdd() throws Exception {
        String keystore = EnvelopeFixture.keystoreWithKey(dir).toString();
        Path in = Files.writeString(dir.resolve("plain"), "text\n".repeat(1000));
        CliRun.Result encrypt = run("encrypt", "--key-provider", keystore, "--key-name", "data", "--key-mode", "envelope",
                in.toString(), dir.resolve("sealed").toString());
        assertEquals(0, encrypt.code(), encrypt.err());
        CliRun.Result decrypt = run("decrypt", "--key-provider", keystore, "--key-name", "data",
                dir.resolve("sealed").toString(), dir.resolve("back").toString());
        assertEquals(0, decrypt.code(), decrypt.err());
        assertEquals(Files.readString(in), Files.readString(dir.resolve("back")));

        CliRun.Result aws = run("encrypt", "--kms", "aws", "--kms-region", "eu-west-2", "--key-name", "alias/data",
                "--key-mode", "envelope", in.toString(), dir.resolve("aws").toString());
        assertEquals(1, aws.code(), aws.err());
        assertTrue(aws.err().contains("--kms aws needs the AWS SDK v2") && aws.err().contains("software.amazon.awssdk:kms"),
                aws.err());
        assertFalse(Files.exists(dir.resolve("aws")), "no OUT");
    }
}
