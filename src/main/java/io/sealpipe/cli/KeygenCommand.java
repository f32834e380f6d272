package io.sealpipe.cli;

import io.sealpipe.Keys;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import javax.crypto.SecretKey;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sealpipe keygen}: a random AES key from {@code SecureRandom}, written as hex to a new
 * file that only its owner can read, into a new entry of a PKCS12 keystore, or (asked for) to
 * standard output. Never overwrites a file or an entry.
 */
@Command(name = "keygen", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Make a random AES key and keep it where you say: a new file (mode 0600, as hex for"
                + " --key-file), an entry of a PKCS12 keystore (for --keystore and --key-alias), or standard output"
                + " (--stdout only). It never overwrites a file or an entry."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:the key was written", "1:the file or keystore could not be written",
            "2:bad arguments, or the file or entry exists"})
final class KeygenCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--aes", defaultValue = "256", paramLabel = "BITS",
            description = "Key size: 128 or 256 (default: ${DEFAULT-VALUE}).")
    int bits;

    static final class Target {
        @Option(names = "--out", paramLabel = "FILE", description = "A new file for the key, as hex (created 0600).")
        Path out;

        @ArgGroup(exclusive = false)
        CipherOptions.KeystoreEntry keystore;

        @Option(names = "--stdout", description = "Print the key as hex on standard output (only when asked: anyone who"
                + " sees the terminal or its log sees the key).")
        boolean stdout;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Option(names = "--password-file", paramLabel = "FILE", description = "With --keystore: a file whose first line is"
            + " the keystore's password (else " + KeystorePassword.ENV + ", else a prompt on the terminal). A new"
            + " keystore gets this password.")
    Path passwordFile;

    private UsageException bad(String message) {
        return new UsageException(spec.commandLine(), message);
    }

    @Override
    public Integer call() throws IOException {
        if (bits != 128 && bits != 256) {
            throw bad("--aes must be 128 or 256");
        }
        if (passwordFile != null && target.keystore == null) {
            throw bad("--password-file is for --keystore");
        }
        SecretKey key = Keys.generate(bits);
        byte[] bytes = key.getEncoded();
        try {
            if (target.out != null) {
                writeFile(target.out, bytes);
                spec.commandLine().getErr().println("sealpipe: wrote a new " + bits + "-bit key to " + target.out
                        + " (mode 0600)");
            } else if (target.keystore != null) {
                writeEntry(target.keystore, key);
                spec.commandLine().getErr().println("sealpipe: stored a new " + bits + "-bit key as '"
                        + target.keystore.alias + "' in " + target.keystore.file);
            } else {
                spec.commandLine().getOut().println(HexFormat.of().formatHex(bytes));
            }
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
        return Main.OK;
    }

    private UsageException keyFileExists() {
        return bad("the --out file exists: keygen never overwrites a key (another key may be in use); choose another"
                + " name");
    }

    /**
     * A new file, 0600 from its creation (no moment when others could read it): written to a
     * temporary file beside it, synced, and linked into place only if no file has the name by
     * then (see {@link Io.Output}). A failure leaves no file.
     */
    private void writeFile(Path file, byte[] key) throws IOException {
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            throw keyFileExists();
        }
        byte[] hex = (HexFormat.of().formatHex(key) + "\n").getBytes(StandardCharsets.US_ASCII);
        try (Io.Output out = Io.Output.file(file, spec.commandLine().getErr(), false)) {
            out.stream.write(hex);
            try {
                out.commit();
            } catch (FileAlreadyExistsException e) {
                throw keyFileExists(); // made after the check above
            }
        } catch (IOException e) {
            throw new IOException("cannot write the --out file: " + Io.describe(e), e);
        } finally {
            Arrays.fill(hex, (byte) 0);
        }
    }

    /**
     * Adds the entry to the keystore (made, as PKCS12 and 0600, if absent), under the keystore's
     * {@link KeystoreLock}, so that keygens on one keystore take turns and none loses another's
     * entry: read under the lock, then written to a temporary file beside it, synced, and
     * renamed over it (keeping an existing keystore's permissions), or linked into place for a
     * new one (so a keystore made meanwhile by another program is not overwritten); the
     * directory is synced after. A failure leaves the keystore as it was.
     */
    private void writeEntry(CipherOptions.KeystoreEntry entry, SecretKey key) throws IOException {
        char[] password = KeySources.password(passwordFile, entry.file, "--keystore", spec);
        Path file = entry.file;
        try {
            if (password.length == 0) {
                throw bad("the keystore password is empty: an empty password protects nothing");
            }
            file = realPath(entry.file);
            PrintWriter err = spec.commandLine().getErr();
            try (KeystoreLock lock = KeystoreLock.take(file, err)) {
                boolean exists = Files.exists(file);
                KeyStore store;
                if (exists) {
                    store = Keys.loadKeyStore(file, password);
                    if (store.containsAlias(entry.alias)) {
                        throw bad("the --keystore file already has an entry '" + entry.alias + "': keygen never"
                                + " replaces a key; choose another alias");
                    }
                } else {
                    store = KeyStore.getInstance("PKCS12");
                    store.load(null, null);
                }
                TestHooks.reached(TestHooks.Step.KEYSTORE_READ, file);
                store.setEntry(entry.alias, new KeyStore.SecretKeyEntry(key),
                        new KeyStore.PasswordProtection(password));
                try (Io.Output out = Io.Output.file(file, err, exists)) {
                    store.store(out.stream, password);
                    try {
                        out.commit();
                    } catch (FileAlreadyExistsException e) {
                        throw bad("the --keystore file appeared while keygen ran (made by another program): run it"
                                + " again");
                    }
                }
            }
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot store the key in the --keystore file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IOException(String.valueOf(e.getMessage()).replaceAll(keystorePath(file), "the --keystore file")
                    .replaceAll(keystorePath(entry.file), "the --keystore file"), e);
        } finally {
            Arrays.fill(password, '\0');
        }
    }

    /**
     * A pattern for the keystore's path in a message, but not where it begins the lock file's
     * path ({@code KEYSTORE.lock}), which the message must name as it is.
     */
    private static String keystorePath(Path keystore) {
        return Pattern.quote(keystore.toString()) + "(?!\\.lock)";
    }

    /**
     * The keystore's real path (its directory's if it does not exist yet): a symbolic link to a
     * keystore stays a link to the updated keystore, and two names for one keystore take one lock.
     */
    private static Path realPath(Path keystore) throws IOException {
        if (Files.exists(keystore)) {
            return keystore.toRealPath();
        }
        Path absolute = keystore.toAbsolutePath();
        return absolute.getParent().toRealPath().resolve(absolute.getFileName());
    }
}
