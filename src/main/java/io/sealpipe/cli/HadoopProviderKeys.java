package io.sealpipe.cli;

import io.sealpipe.cli.CipherOptions.KeyVersion;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;

/**
 * The versions of a key read through Hadoop's own {@code KeyProvider} API: a KMS
 * ({@code kms://http@HOST:PORT/kms}) or any other provider Hadoop knows. Needs hadoop-common and
 * its dependencies on the class path, which the CLI jar does not hold: {@link #available()} says
 * whether they are there, and no other method may be called if not. Hadoop's configuration
 * (core-site.xml on the class path, as {@code hadoop classpath} gives it) applies: the KMS's
 * authentication, timeouts and retries.
 */
final class HadoopProviderKeys {
    private HadoopProviderKeys() {}

    /** Whether Hadoop's key provider API can be loaded here. */
    static boolean available() {
        try {
            Class.forName("org.apache.hadoop.crypto.key.KeyProviderFactory", false, HadoopProviderKeys.class.getClassLoader());
            Class.forName("org.apache.hadoop.conf.Configuration", false, HadoopProviderKeys.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * Every version of key {@code name} in the provider at {@code uri}, oldest first, as copies
     * the caller wipes (the provider's own arrays are wiped here).
     *
     * @throws IOException naming the options, not the key's material, if the provider cannot be
     *     made or read, or has no version of the key
     */
    static List<KeyVersion> versions(URI uri, String name) throws IOException {
        KeyProvider provider = KeyProviderFactory.get(uri, new Configuration());
        if (provider == null) {
            throw new IOException("Hadoop knows no key provider for the --key-provider's scheme '" + uri.getScheme()
                    + "' (its own: kms, jceks, localjceks, user)");
        }
        List<KeyVersion> versions = new ArrayList<>();
        try {
            List<KeyProvider.KeyVersion> found = provider.getKeyVersions(name);
            if (found == null || found.isEmpty()) {
                throw new IOException("the --key-provider has no version of the --key-name key (does it exist, and may"
                        + " this user read it?)");
            }
            for (KeyProvider.KeyVersion version : found) {
                byte[] material = version.getMaterial();
                if (material == null) {
                    throw new IOException("the --key-provider gave no material for version " + version.getVersionName()
                            + " of the --key-name key (may this user read keys' material?)");
                }
                versions.add(new KeyVersion(version.getVersionName(), material.clone()));
                Arrays.fill(material, (byte) 0);
            }
            return versions;
        } catch (IOException | RuntimeException e) {
            versions.forEach(KeyVersion::wipe);
            throw new IOException("cannot read the --key-name key from the --key-provider: " + e.getMessage(), e);
        } finally {
            try {
                provider.close();
            } catch (IOException | RuntimeException e) {
                // What was read stands.
            }
        }
    }
}
