package io.sealpipe.cli;

import io.sealpipe.cli.CipherOptions.KeyVersion;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;

/**
 * A key's versions from any Hadoop {@link KeyProvider} (a KMS, ...), through hadoop-common, an
 * optional dependency of the CLI: this class is loaded only when it is on the class path.
 */
final class HadoopKeyProvider {
    private HadoopKeyProvider() {}

    static List<KeyVersion> versions(String uri, String name) throws IOException {
        Configuration conf = new Configuration();
        KeyProvider provider = KeyProviderFactory.get(URI.create(uri), conf);
        if (provider == null) {
            throw new IOException("--key-provider " + uri + " names no KeyProvider that Hadoop knows");
        }
        try {
            List<KeyProvider.KeyVersion> found = provider.getKeyVersions(name);
            if (found == null || found.isEmpty()) {
                throw new IOException("--key-provider " + uri + " has no key '" + name + "'");
            }
            List<KeyVersion> versions = new ArrayList<>();
            for (KeyProvider.KeyVersion v : found) {
                if (v.getMaterial() != null) {
                    versions.add(new KeyVersion(v.getVersionName(), v.getMaterial().clone()));
                }
            }
            return versions;
        } finally {
            provider.close();
        }
    }
}
