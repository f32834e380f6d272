package io.sealpipe.cli;

import io.sealpipe.cli.CipherOptions.KeySource;
import io.sealpipe.cli.CipherOptions.KeyVersion;
import io.sealpipe.cli.CipherOptions.KeystoreEntry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The key options ({@code --key-file}, {@code --key-hex}, {@code --key-env}, {@code --keystore}
 * with {@code --key-alias}) read into the key's versions, for every command that takes a key.
 * Messages name options and files, never a key or a password.
 */
final class KeySources {
    private KeySources() {}

    private static UsageException bad(CommandSpec spec, String message) {
        return new UsageException(spec.commandLine(), message);
    }

    /**
     * The key, or with --keystore every version of it (the entry ALIAS and Hadoop's ALIAS@N
     * entries), oldest first; the caller wipes them.
     *
     * @throws IOException if a keystore cannot be read or opened (exit 1)
     */
    static List<KeyVersion> versions(KeySource key, Path passwordFile, CommandSpec spec) throws IOException {
        if (passwordFile != null && key.keystore == null && key.provider == null) {
            throw bad(spec, "--password-file is for --keystore or --key-provider");
        }
        if (key.keystore != null) {
            return fromKeystore(key.keystore, passwordFile, spec);
        }
        if (key.provider != null) {
            return fromProvider(key.provider, passwordFile, spec);
        }
        byte[] bytes;
        if (key.hex != null) {
            bytes = parseHex("--key-hex", key.hex, spec);
        } else if (key.env != null) {
            bytes = fromEnvironment(key.env, spec);
        } else {
            try {
                bytes = KeyFile.read(key.file);
            } catch (IOException e) {
                // Not the path: it may be the key itself, given to --key-file instead of --key-hex.
                throw bad(spec, "cannot read --key-file: " + Io.reasonOnly(e));
            } catch (IllegalArgumentException e) {
                throw bad(spec, e.getMessage());
            }
        }
        return new ArrayList<>(List.of(new KeyVersion("the key", bytes)));
    }

    static byte[] parseHex(String option, String value, CommandSpec spec) {
        try {
            return HexFormat.of().parseHex(value.trim());
        } catch (IllegalArgumentException e) {
            throw bad(spec, option + " is not hex: expected pairs of the digits 0-9 and a-f");
        }
    }

    private static byte[] fromEnvironment(String name, CommandSpec spec) {
        String value = System.getenv(name);
        if (value == null || value.isEmpty()) {
            throw bad(spec, "--key-env " + name + ": the environment variable is not set");
        }
        byte[] content = value.trim().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        try {
            if (content.length != 32 && content.length != 64) {
                throw bad(spec, "--key-env " + name + " must hold the key as 32 or 64 hex digits, not " + content.length
                        + " characters");
            }
            return KeyFile.decode(content);
        } catch (IllegalArgumentException e) {
            throw bad(spec, "--key-env " + name + " must hold the key as 32 or 64 hex digits");
        } finally {
            Arrays.fill(content, (byte) 0);
        }
    }

    /**
     * The versions of a keystore key, oldest first: the entry ALIAS itself if it is an AES key,
     * then ALIAS@0, ALIAS@1, ... (how Hadoop's JCEKS key provider keeps a key's versions). A
     * keystore that cannot be opened, or has none of them, is a failure (exit 1).
     */
    private static List<KeyVersion> fromKeystore(KeystoreEntry entry, Path passwordFile, CommandSpec spec)
            throws IOException {
        char[] password;
        try {
            password = KeystorePassword.read(passwordFile, entry.file);
        } catch (IllegalArgumentException e) {
            throw bad(spec, e.getMessage());
        } catch (IOException e) {
            throw bad(spec, "cannot read --password-file: " + Io.reasonOnly(e));
        }
        List<KeyVersion> versions = new ArrayList<>();
        try {
            java.security.KeyStore store = io.sealpipe.Keys.loadKeyStore(entry.file, password);
            java.util.TreeMap<Integer, String> numbered = new java.util.TreeMap<>();
            for (String alias : java.util.Collections.list(store.aliases())) {
                if (alias.startsWith(entry.alias + "@") && alias.substring(entry.alias.length() + 1).matches("[0-9]{1,9}")) {
                    numbered.put(Integer.parseInt(alias.substring(entry.alias.length() + 1)), alias);
                }
            }
            java.security.GeneralSecurityException plainFailure = null;
            try {
                versions.add(new KeyVersion(entry.alias, io.sealpipe.Keys.secretKey(store, entry.alias, password)
                        .getEncoded()));
            } catch (java.security.GeneralSecurityException e) {
                plainFailure = e; // Hadoop's keystores keep metadata under ALIAS itself
            }
            for (String alias : numbered.values()) {
                versions.add(new KeyVersion(alias, io.sealpipe.Keys.secretKey(store, alias, password).getEncoded()));
            }
            if (versions.isEmpty()) {
                throw plainFailure;
            }
            return versions;
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("--keystore " + entry.file + " does not exist");
        } catch (java.security.GeneralSecurityException e) {
            versions.forEach(KeyVersion::wipe);
            throw new IOException(entry.file + ": " + e.getMessage(), e);
        } finally {
            Arrays.fill(password, '\0');
        }
    }

    /** Hadoop's JavaKeyStoreProvider password when none is configured. */
    private static final String HADOOP_DEFAULT_PASSWORD = "none";

    /**
     * The versions of a key in a Hadoop KeyProvider, oldest first. A {@code jceks://file/PATH}
     * (or {@code localjceks://file/PATH}) keystore is read directly: Hadoop keeps version N of
     * key K as the entry K@N, under the password of {@code HADOOP_KEYSTORE_PASSWORD} or "none".
     * Other providers go through hadoop-common's {@code KeyProviderFactory}, when it is on the
     * class path.
     */
    private static List<KeyVersion> fromProvider(CipherOptions.ProviderKey key, Path passwordFile, CommandSpec spec)
            throws IOException {
        java.net.URI uri;
        try {
            uri = new java.net.URI(key.uri);
        } catch (java.net.URISyntaxException e) {
            throw bad(spec, "--key-provider is not a URI: " + e.getReason());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme();
        if ((scheme.equals("jceks") || scheme.equals("localjceks")) && "file".equals(uri.getAuthority())) {
            char[] password;
            if (passwordFile != null) {
                password = KeystorePassword.read(passwordFile, Path.of(uri.getPath()));
            } else {
                String env = System.getenv("HADOOP_KEYSTORE_PASSWORD");
                password = (env != null ? env : HADOOP_DEFAULT_PASSWORD).toCharArray();
            }
            try {
                List<KeyVersion> versions = numberedVersions(Path.of(uri.getPath()), key.name, password);
                if (versions.isEmpty()) {
                    throw new IOException("--key-provider " + key.uri + " has no version of the key '" + key.name
                            + "' (entries " + key.name + "@N)");
                }
                return versions;
            } finally {
                Arrays.fill(password, '\0');
            }
        }
        if (KeySources.class.getClassLoader().getResource("org/apache/hadoop/crypto/key/KeyProviderFactory.class") == null) {
            throw bad(spec, "--key-provider " + scheme + "://... needs hadoop-common on the class path (only jceks://file/..."
                    + " is read without it)");
        }
        return HadoopKeyProvider.versions(key.uri, key.name);
    }

    /** The entries NAME@0, NAME@1, ... of a JCEKS or PKCS12 keystore, in version order. */
    private static List<KeyVersion> numberedVersions(Path file, String name, char[] password) throws IOException {
        List<KeyVersion> versions = new ArrayList<>();
        try {
            java.security.KeyStore store = io.sealpipe.Keys.loadKeyStore(file, password);
            java.util.TreeMap<Integer, String> numbered = new java.util.TreeMap<>();
            for (String alias : java.util.Collections.list(store.aliases())) {
                if (alias.startsWith(name + "@") && alias.substring(name.length() + 1).matches("[0-9]{1,9}")) {
                    numbered.put(Integer.parseInt(alias.substring(name.length() + 1)), alias);
                }
            }
            for (String alias : numbered.values()) {
                versions.add(new KeyVersion(alias, io.sealpipe.Keys.secretKey(store, alias, password).getEncoded()));
            }
            return versions;
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException(file + " does not exist");
        } catch (java.security.GeneralSecurityException e) {
            versions.forEach(KeyVersion::wipe);
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }
}
