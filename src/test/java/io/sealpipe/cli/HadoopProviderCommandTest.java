package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.cli.CliRun.Result;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --key-provider} URIs that the CLI reads through Hadoop's own KeyProvider API (a KMS in
 * production; here Hadoop's {@code user:///} provider, the keys in the current user's
 * credentials, which only Hadoop reads): the key's versions come from Hadoop and the newest
 * writes; a key the provider does not have fails naming the options; a JCEKS file spelled as
 * Hadoop's configuration spells it ({@code jceks://file@/PATH}) is still read without Hadoop.
 * The KMS itself is the Hadoop integration project's ({@code KmsCliTest}); a class path without
 * Hadoop, {@code CliJarIT}'s.
 */
class HadoopProviderCommandTest {
    @TempDir
    Path dir;

    @Test
    void readsTheKeyThroughHadoopsProviderApi() throws Exception {
        UserGroupInformation user = UserGroupInformation.createUserForTesting("cli-" + System.nanoTime(), new String[0]);
        user.doAs((PrivilegedExceptionAction<Void>) () -> {
            KeyProvider provider = KeyProviderFactory.get(URI.create("user:///"), new Configuration(false));
            KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
            options.setBitLength(256);
            provider.createKey("data", options);
            provider.rollNewVersion("data");
            provider.flush();

            Path in = Files.writeString(dir.resolve("plain"), "rows of a table\n".repeat(2000));
            String[] key = {"--key-provider", "user:///", "--key-name", "data"};
            Result encrypt = CliRun.run("encrypt", key[0], key[1], key[2], key[3], in.toString(), dir.resolve("sealed").toString());
            assertEquals(0, encrypt.code(), encrypt.err());
            Result inspect = CliRun.run("inspect", key[0], key[1], key[2], key[3], dir.resolve("sealed").toString());
            assertEquals(0, inspect.code(), inspect.err());
            assertTrue(inspect.out().contains("data@1"), "written with the newest version: " + inspect.out());
            Result decrypt = CliRun.run("decrypt", key[0], key[1], key[2], key[3], dir.resolve("sealed").toString(),
                    dir.resolve("back").toString());
            assertEquals(0, decrypt.code(), decrypt.err());
            assertEquals(Files.readString(in), Files.readString(dir.resolve("back")));

            Result missing = CliRun.run("encrypt", key[0], key[1], key[2], "nosuchkey", in.toString(),
                    dir.resolve("never").toString());
            assertEquals(1, missing.code(), missing.err());
            assertTrue(missing.err().contains("the --key-provider has no version of the --key-name key"), missing.err());
            assertFalse(Files.exists(dir.resolve("never")), "an output was made without a key");
            return null;
        });
    }

    @Test
    void aJceksFileInHadoopsSpellingIsReadDirectly() throws Exception {
        Path keystore = dir.resolve("keys.jceks").toAbsolutePath();
        KeyProvider provider = KeyProviderFactory.get(URI.create("jceks://file" + keystore), new Configuration(false));
        KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
        options.setBitLength(256);
        provider.createKey("data", options);
        provider.flush();
        provider.close();
        Path in = Files.writeString(dir.resolve("plain"), "a line\n".repeat(100));
        Result encrypt = CliRun.run("encrypt", "--key-provider", "jceks://file@" + keystore, "--key-name", "data",
                in.toString(), dir.resolve("sealed").toString());
        assertEquals(0, encrypt.code(), encrypt.err());
        Result decrypt = CliRun.run("decrypt", "--key-provider", "jceks://file" + keystore, "--key-name", "data",
                dir.resolve("sealed").toString(), dir.resolve("back").toString());
        assertEquals(0, decrypt.code(), decrypt.err());
        assertEquals(Files.readString(in), Files.readString(dir.resolve("back")));
    }

    @Test
    void aPasswordFileIsOnlyForAJceksFile() throws Exception {
        Path password = Files.writeString(dir.resolve("password"), "secret\n");
        Result r = CliRun.run("encrypt", "--key-provider", "kms://http@127.0.0.1:9600/kms", "--key-name", "data",
                "--password-file", password.toString(), "-", dir.resolve("out").toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--password-file is for a --key-provider jceks://file/PATH; a kms:// provider"), r.err());
    }

    @Test
    void aProviderWithoutASchemeIsAUsageError() {
        Result r = CliRun.run("encrypt", "--key-provider", "/etc/keys.jceks", "--key-name", "data", "-", dir.resolve("out").toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--key-provider takes a Hadoop key provider URI: jceks://file/PATH"), r.err());
    }
}
