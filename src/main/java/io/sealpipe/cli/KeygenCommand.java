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

    /** A new file, 0600 from its creation (no moment when others could read it), opened once. */
    private void writeFile(Path file, byte[] key) throws IOException {
        byte[] hex = (HexFormat.of().formatHex(key) + "\n").getBytes(StandardCharsets.US_ASCII);
        try (java.nio.channels.SeekableByteChannel out = Files.newByteChannel(file, java.util.Set.<java.nio.file.OpenOption>of(
                java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE,
                java.nio.file.LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(hex);
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
        } catch (FileAlreadyExistsException e) {
            throw bad("the --out file exists: keygen never overwrites a key (another key may be in use); choose another"
                    + " name");
        } finally {
            Arrays.fill(hex, (byte) 0);
        }
    }

    /**
     * Adds the entry to the keystore (made, as PKCS12 and 0600, if absent): written to a new file
     * beside it, synced, and moved over it (keeping an existing keystore's permissions), or linked
     * into place for a new one (so a keystore made meanwhile is not overwritten): a failure leaves
     * the keystore as it was. Two keygens on one keystore at the same moment are not serialised.
     */
    private void writeEntry(CipherOptions.KeystoreEntry entry, SecretKey key) throws IOException {
        char[] password = KeySources.password(passwordFile, entry.file, "--keystore", spec);
        try {
            if (password.length == 0) {
                throw bad("the keystore password is empty: an empty password protects nothing");
            }
            boolean exists = Files.exists(entry.file);
            KeyStore store;
            if (exists) {
                store = Keys.loadKeyStore(entry.file, password);
                if (store.containsAlias(entry.alias)) {
                    throw bad("the --keystore file already has an entry '" + entry.alias + "': keygen never replaces a"
                            + " key; choose another alias");
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
                try (java.io.FileOutputStream out = new java.io.FileOutputStream(temp.toFile())) {
                    store.store(out, password);
                    out.getFD().sync();
                }
                if (exists) {
                    Files.setPosixFilePermissions(temp, Files.getPosixFilePermissions(entry.file));
                    Files.move(temp, entry.file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                } else {
                    try {
                        Files.createLink(entry.file, temp);
                    } catch (FileAlreadyExistsException e) {
                        throw bad("the --keystore file appeared while keygen ran: run it again");
                    }
                }
            } finally {
                Files.deleteIfExists(temp);
            }
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot store the key in the --keystore file: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new IOException(String.valueOf(e.getMessage()).replace(entry.file.toString(), "the --keystore file"), e);
        } finally {
            Arrays.fill(password, '\0');
        }
    }
}
