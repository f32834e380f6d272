package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.cli.CliRun.Result;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --key-provider} URIs that the CLI reads through Hadoop's own KeyProvider API (a KMS in
 * production; here a keystore named the way Hadoop's configuration names it, {@code
 * jceks://file@/PATH}, which only Hadoop's provider reads): the key's versions come from
 * Hadoop, a file written under one reads back under the JCEKS reader's, and a key the provider
 * does not have fails naming the options. The KMS itself is the Hadoop integration project's
 * ({@code KmsCliTest}); a class path without Hadoop, {@code CliJarIT}'s.
 */
class HadoopProviderCommandTest {
    @TempDir
    Path dir;

    @Test
    void readsTheKeyThroughHadoopsProviderApi() throws Exception {
        Path keystore = dir.resolve("keys.jceks").toAbsolutePath();
        KeyProvider provider = KeyProviderFactory.get(URI.create("jceks://file" + keystore), new Configuration(false));
        KeyProvider.Options options = new KeyProvider.Options(new Configuration(false));
        options.setBitLength(256);
        provider.createKey("data", options);
        provider.rollNewVersion("data");
        provider.flush();
        provider.close();

        Path in = Files.writeString(dir.resolve("plain"), "rows of a table\n".repeat(2000));
        String throughHadoop = "jceks://file@" + keystore;
        Result encrypt = CliRun.run("encrypt", "--key-provider", throughHadoop, "--key-name", "data", in.toString(),
                dir.resolve("sealed").toString());
        assertEquals(0, encrypt.code(), encrypt.err());
        Result inspect = CliRun.run("inspect", "--key-provider", throughHadoop, "--key-name", "data",
                dir.resolve("sealed").toString());
        assertEquals(0, inspect.code(), inspect.err());
        assertTrue(inspect.out().contains("data@1"), "written with the newest version: " + inspect.out());
        // The same keystore through the CLI's own JCEKS reader.
        Result decrypt = CliRun.run("decrypt", "--key-provider", "jceks://file" + keystore, "--key-name", "data",
                dir.resolve("sealed").toString(), dir.resolve("back").toString());
        assertEquals(0, decrypt.code(), decrypt.err());
        assertEquals(Files.readString(in), Files.readString(dir.resolve("back")));

        Result missing = CliRun.run("encrypt", "--key-provider", throughHadoop, "--key-name", "nosuchkey", in.toString(),
                dir.resolve("never").toString());
        assertEquals(1, missing.code(), missing.err());
        assertTrue(missing.err().contains("cannot read the --key-name key from the --key-provider"), missing.err());
        assertTrue(!Files.exists(dir.resolve("never")), "an output was made without a key");
    }

    @Test
    void aPasswordFileIsOnlyForAJceksFile() throws Exception {
        Path password = Files.writeString(dir.resolve("password"), "secret\n");
        Result r = CliRun.run("encrypt", "--key-provider", "kms://http@127.0.0.1:9600/kms", "--key-name", "data",
                "--password-file", password.toString(), "-", dir.resolve("out").toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--password-file is for a --key-provider jceks://file/PATH, not one Hadoop reads (kms://)"),
                r.err());
    }
}
