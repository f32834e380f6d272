package io.sealpipe.cli;

import io.sealpipe.Keys;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.Callable;
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
        description = {"Make a random AES key and keep it where you say: a new file (mode 0600, as 64 hex digits for"
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

    /** A new file, 0600 from its creation (no moment when others could read it). */
    private void writeFile(Path file, byte[] key) throws IOException {
        byte[] hex = (HexFormat.of().formatHex(key) + "\n").getBytes(StandardCharsets.US_ASCII);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            throw bad(file + " exists: keygen never overwrites a key (another key may be in use); choose another name");
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(hex);
        } catch (IOException e) {
            Files.deleteIfExists(file);
            throw e;
        } finally {
            Arrays.fill(hex, (byte) 0);
        }
    }

    /**
     * Adds the entry to the keystore (made, as PKCS12, if absent): written to a new file beside
     * it (0600) and moved over it, so a failure leaves the keystore as it was.
     */
    private void writeEntry(CipherOptions.KeystoreEntry entry, SecretKey key) throws IOException {
        char[] password;
        try {
            password = KeystorePassword.read(passwordFile, entry.file);
        } catch (IllegalArgumentException e) {
            throw bad(e.getMessage());
        }
        try {
            KeyStore store;
            if (Files.exists(entry.file)) {
                store = Keys.loadKeyStore(entry.file, password);
                if (store.containsAlias(entry.alias)) {
                    throw bad(entry.file + " already has an entry '" + entry.alias + "': keygen never replaces a key;"
                            + " choose another alias");
                }
            } else {
                store = KeyStore.getInstance("PKCS12");
                store.load(null, null);
            }
            store.setEntry(entry.alias, new KeyStore.SecretKeyEntry(key), new KeyStore.PasswordProtection(password));
            Path dir = entry.file.toAbsolutePath().getParent();
            Path temp = Files.createTempFile(dir, ".sealpipe-keystore-", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                try (OutputStream out = Files.newOutputStream(temp)) {
                    store.store(out, password);
                }
                Files.move(temp, entry.file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(temp);
            }
        } catch (GeneralSecurityException e) {
            throw new IOException(entry.file + ": cannot store the key: " + e.getMessage(), e);
        } finally {
            Arrays.fill(password, '\0');
        }
    }
}
