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

    /** A variable's name as typed, if it looks like one; never a key typed in its place. */
    private static String variable(String name) {
        boolean nameLike = name.matches("[A-Za-z_][A-Za-z0-9_]{0,63}") && !name.matches("[0-9a-fA-F]{32}|[0-9a-fA-F]{64}");
        return nameLike ? "--key-env " + name : "--key-env (the name given is not a variable name)";
    }

    /** The key in environment variable {@code name}: 32 or 64 hex digits, nothing else. */
    private static byte[] fromEnvironment(String name, CommandSpec spec) {
        String value = System.getenv(name);
        if (value == null || value.isEmpty()) {
            throw bad(spec, variable(name) + ": the environment variable is not set");
        }
        String digits = value.trim();
        if ((digits.length() != 32 && digits.length() != 64) || !digits.chars().allMatch(HexFormat::isHexDigit)) {
            // Never taken as raw bytes: a passphrase or base64 text would become a weak key.
            String found = digits.length() == 32 || digits.length() == 64 ? digits.length() + " characters that are not all hex"
                    : digits.length() + " characters";
            throw bad(spec, variable(name) + " must hold the key as 32 or 64 hex digits (0-9 and a-f, either case), not " + found + ": a"
                    + " passphrase or base64 text is not a key. Make one with: sealpipe keygen --out FILE, and set the"
                    + " variable to that file's content");
        }
        return HexFormat.of().parseHex(digits);
    }

    /**
     * The versions of a keystore key, oldest first: the entry ALIAS itself if it is an AES key,
     * then ALIAS@0, ALIAS@1, ... (how Hadoop's JCEKS key provider keeps a key's versions); aliases
     * compare without case, as keystores store them. A keystore that cannot be opened, or has
     * none of them, is a failure (exit 1). Messages say "the --keystore file", never its name as
     * typed (a key typed there by mistake would be shown).
     */
    private static List<KeyVersion> fromKeystore(KeystoreEntry entry, Path passwordFile, CommandSpec spec)
            throws IOException {
        char[] password = password(passwordFile, entry.file, "--keystore", spec);
        List<KeyVersion> versions = new ArrayList<>();
        try {
            java.security.KeyStore store = io.sealpipe.Keys.loadKeyStore(entry.file, password);
            java.security.GeneralSecurityException plainFailure = null;
            try {
                versions.add(new KeyVersion(entry.alias, io.sealpipe.Keys.secretKey(store, entry.alias, password)
                        .getEncoded()));
            } catch (java.security.GeneralSecurityException e) {
                plainFailure = e; // Hadoop's keystores keep metadata under ALIAS itself
            }
            versions.addAll(numbered(store, entry.alias, password));
            if (versions.isEmpty()) {
                throw plainFailure;
            }
            return versions;
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("the --keystore file does not exist");
        } catch (java.security.GeneralSecurityException | IOException e) {
            versions.forEach(KeyVersion::wipe);
            throw new IOException(hide(e.getMessage(), entry.file.toString(), "the --keystore file"), e);
        } finally {
            Arrays.fill(password, '\0');
        }
    }

    /** A password from --password-file, the environment or a prompt; an unreadable file is exit 2. */
    static char[] password(Path passwordFile, Path keystore, String option, CommandSpec spec) {
        try {
            return KeystorePassword.read(passwordFile, keystore);
        } catch (IllegalArgumentException e) {
            throw bad(spec, hide(e.getMessage(), keystore.toString(), "the " + option + " file"));
        } catch (IOException e) {
            throw bad(spec, "cannot read --password-file: " + Io.reasonOnly(e));
        }
    }

    private static String hide(String message, String typed, String name) {
        return message == null ? "" : message.replace(typed, name);
    }

    /** Hadoop's JavaKeyStoreProvider password when none is configured. */
    private static final String HADOOP_DEFAULT_PASSWORD = "none";

    /**
     * The versions of a key in a Hadoop {@code jceks://file/PATH} (or {@code localjceks://file/PATH})
     * key provider, read directly: Hadoop keeps version N of key K as the entry K@N, under the
     * password of --password-file, {@code HADOOP_KEYSTORE_PASSWORD} or Hadoop's default. Other
     * providers (a KMS, kms://) are read through Hadoop's own API ({@link HadoopProviderKeys})
     * where hadoop-common is on the class path; where it is not, the usage error says what to add.
     */
    private static List<KeyVersion> fromProvider(CipherOptions.ProviderKey key, Path passwordFile, CommandSpec spec)
            throws IOException {
        if (key.kms(spec.commandLine()).aws()) {
            throw bad(spec, "--kms aws keeps its keys: they never leave AWS KMS, so it wraps data keys only: give"
                    + " --key-mode envelope");
        }
        java.net.URI uri;
        try {
            uri = new java.net.URI(key.uri);
        } catch (java.net.URISyntaxException e) {
            throw bad(spec, "--key-provider is not a URI");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme();
        if (scheme.isEmpty()) {
            throw bad(spec, "--key-provider takes a Hadoop key provider URI: jceks://file/PATH (a JCEKS file) or"
                    + " kms://http@HOST:PORT/kms (a KMS)");
        }
        // jceks://file@/PATH is how Hadoop's configuration spells the same file.
        boolean keystoreFile = (scheme.equals("jceks") || scheme.equals("localjceks"))
                && ("file".equals(uri.getAuthority()) || "file@".equals(uri.getAuthority())) && uri.getPath() != null;
        if (!keystoreFile) {
            return fromHadoop(uri, key.name, passwordFile, spec);
        }
        Path file = Path.of(uri.getPath());
        char[] password;
        if (passwordFile != null) {
            password = password(passwordFile, file, "--key-provider", spec);
        } else {
            String env = System.getenv("HADOOP_KEYSTORE_PASSWORD");
            password = (env != null ? env : HADOOP_DEFAULT_PASSWORD).toCharArray();
        }
        List<KeyVersion> versions = new ArrayList<>();
        try {
            versions.addAll(numbered(io.sealpipe.Keys.loadKeyStore(file, password), key.name, password));
            if (versions.isEmpty()) {
                throw new IOException("the --key-provider has no version of the --key-name key (entries NAME@N)");
            }
            return versions;
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IOException("the --key-provider file does not exist");
        } catch (java.security.GeneralSecurityException | IOException e) {
            versions.forEach(KeyVersion::wipe);
            throw new IOException(hide(hide(e.getMessage(), file.toString(), "the --key-provider file"), key.name,
                    "the --key-name key"), e);
        } finally {
            Arrays.fill(password, '\0');
        }
    }

    /**
     * The versions of a key in a provider only Hadoop reads (a KMS): through its own API, which
     * must be on the class path, all of it; where it is not, the usage error says what to add.
     */
    private static List<KeyVersion> fromHadoop(java.net.URI uri, String name, Path passwordFile, CommandSpec spec)
            throws IOException {
        if (passwordFile != null) {
            throw bad(spec, "--password-file is for a --key-provider jceks://file/PATH; a " + uri.getScheme() + ":// provider"
                    + " takes its credentials from Hadoop's configuration");
        }
        String add = "run the CLI with Hadoop's client on the class path, e.g. java -cp sealpipe-<version>-cli.jar:$(hadoop"
                + " classpath) io.sealpipe.cli.Main ..., or ./sealpipe with SEALPIPE_CLASSPATH=\"$(hadoop classpath)\"";
        if (!HadoopProviderKeys.available()) {
            throw bad(spec, "--key-provider " + uri.getScheme() + "://... is read through Hadoop's KeyProvider API, and"
                    + " Hadoop's client (hadoop-common 3.x and its dependencies) is not on the class path: " + add
                    + ". A JCEKS file (jceks://file/PATH) needs no Hadoop");
        }
        try {
            return HadoopProviderKeys.versions(uri, name);
        } catch (LinkageError e) { // hadoop-common without the jars it needs
            throw bad(spec, "--key-provider " + uri.getScheme() + "://...: Hadoop's client on the class path is incomplete ("
                    + e + "): " + add);
        }
    }

    /** The entries NAME@0, NAME@1, ... of a keystore in version order, NAME compared without case. */
    private static List<KeyVersion> numbered(java.security.KeyStore store, String name, char[] password)
            throws java.security.GeneralSecurityException {
        String prefix = name.toLowerCase(java.util.Locale.ENGLISH) + "@";
        java.util.TreeMap<Integer, String> byNumber = new java.util.TreeMap<>();
        for (String alias : java.util.Collections.list(store.aliases())) {
            String lower = alias.toLowerCase(java.util.Locale.ENGLISH);
            if (lower.startsWith(prefix) && lower.substring(prefix.length()).matches("[0-9]{1,9}")) {
                byNumber.put(Integer.parseInt(lower.substring(prefix.length())), alias);
            }
        }
        List<KeyVersion> versions = new ArrayList<>();
        try {
            for (String alias : byNumber.values()) {
                versions.add(new KeyVersion(alias, io.sealpipe.Keys.secretKey(store, alias, password).getEncoded()));
            }
        } catch (java.security.GeneralSecurityException e) {
            versions.forEach(KeyVersion::wipe);
            throw e;
        }
        return versions;
    }
}
