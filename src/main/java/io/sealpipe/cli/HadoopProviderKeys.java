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
     * the caller wipes. The provider's own arrays are left alone: some are its store (Hadoop's
     * {@code user:///} provider hands out its credentials' array).
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
            List<KeyProvider.KeyVersion> found;
            try {
                found = provider.getKeyVersions(name);
            } catch (IOException | RuntimeException e) {
                throw new IOException("cannot read the --key-name key from the --key-provider: " + e.getMessage()
                        + " (is the provider reachable, and may this user read the key's material?)", e);
            }
            if (found == null || found.isEmpty()) {
                throw new IOException("the --key-provider has no version of the --key-name key (does the key exist, and"
                        + " may this user read its material?)");
            }
            for (KeyProvider.KeyVersion version : found) {
                byte[] material = version.getMaterial();
                if (material == null) {
                    throw new IOException("the --key-provider gave no material for version " + version.getVersionName()
                            + " of the --key-name key (may this user read the key's material?)");
                }
                versions.add(new KeyVersion(version.getVersionName(), material.clone()));
            }
            return versions;
        } catch (IOException | RuntimeException e) {
            versions.forEach(KeyVersion::wipe);
            throw e;
        } finally {
            try {
                provider.close();
            } catch (IOException | RuntimeException e) {
                // What was read stands.
            }
        }
    }
}
