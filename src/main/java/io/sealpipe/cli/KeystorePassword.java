package io.sealpipe.cli;

import java.io.Console;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A keystore's password, never from the command line: {@code --password-file FILE} (its first
 * line), else the environment variable {@value #ENV}, else a prompt without echo when a terminal
 * is attached. The caller wipes the array.
 */
final class KeystorePassword {
    /** The environment variable that holds the keystore password. */
    static final String ENV = "SEALPIPE_KEYSTORE_PASSWORD";

    private KeystorePassword() {}

    /**
     * @param file {@code --password-file}, or null
     * @param keystore the keystore it is for, for the prompt and the messages
     * @throws IOException if the password file cannot be read
     * @throws IllegalArgumentException if there is no source, naming the ways to give one
     */
    static char[] read(Path file, Path keystore) throws IOException {
        if (file != null) {
            byte[] bytes = Files.readAllBytes(file);
            try {
                int n = 0;
                while (n < bytes.length && bytes[n] != '\n' && bytes[n] != '\r') {
                    n++;
                }
                CharBuffer chars = StandardCharsets.UTF_8.decode(ByteBuffer.wrap(bytes, 0, n));
                char[] password = new char[chars.remaining()];
                chars.get(password);
                Arrays.fill(chars.array(), '\0');
                return password;
            } finally {
                Arrays.fill(bytes, (byte) 0);
            }
        }
        String env = System.getenv(ENV);
        if (env != null) {
            return env.toCharArray();
        }
        Console console = System.console();
        if (console != null) {
            char[] password = console.readPassword("Password of %s: ", keystore);
            if (password != null) {
                return password;
            }
        }
        throw new IllegalArgumentException("the keystore " + keystore + " needs its password: give --password-file FILE"
                + " or set " + ENV + " (there is no terminal to ask on); never on the command line");
    }
}
