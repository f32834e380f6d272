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
 * line), else the environment variable {@value #ENV}, else a prompt without echo when standard
 * input is a terminal (through the JDK's Console, or /dev/tty when output is redirected). The
 * caller wipes the array.
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
                return decode(bytes, n);
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
            char[] password = console.readPassword("Password of the keystore: ");
            if (password != null) {
                return password;
            }
        }
        char[] fromTerminal = fromControllingTerminal();
        if (fromTerminal != null) {
            return fromTerminal;
        }
        throw new IllegalArgumentException(keystore + " needs its password: give --password-file FILE"
                + " or set " + ENV + " (there is no terminal to ask on); never on the command line");
    }

    /**
     * The password typed on the controlling terminal ({@code /dev/tty}) with echo off, when the
     * JDK has no {@link Console} because standard input or output is redirected (as in
     * {@code decrypt ... > out}) but a terminal is attached; null when there is none.
     */
    private static char[] fromControllingTerminal() throws IOException {
        Path tty = Path.of("/dev/tty");
        if (!stdinIsTerminal() || !Files.isReadable(tty) || !Files.isWritable(tty)) {
            return null; // a program run by another (a build, a pipe) is never asked
        }
        java.io.RandomAccessFile terminal;
        try {
            terminal = new java.io.RandomAccessFile(tty.toFile(), "rw");
        } catch (IOException e) {
            return null; // no controlling terminal after all
        }
        try (terminal) {
            if (!stty("-echo")) {
                return null; // without a way to hide it, never read a password
            }
            try {
                terminal.write("Password of the keystore: ".getBytes(StandardCharsets.UTF_8));
                byte[] bytes = new byte[1024];
                int n = 0;
                for (int b; n < bytes.length && (b = terminal.read()) >= 0 && b != '\n' && b != '\r'; ) {
                    bytes[n++] = (byte) b;
                }
                try {
                    return decode(bytes, n);
                } finally {
                    Arrays.fill(bytes, (byte) 0);
                }
            } finally {
                stty("echo");
                terminal.write('\n');
            }
        }
    }

    /** The first {@code n} bytes as UTF-8 characters, leaving no copy in the decoder's buffer. */
    private static char[] decode(byte[] bytes, int n) {
        CharBuffer chars = StandardCharsets.UTF_8.decode(ByteBuffer.wrap(bytes, 0, n));
        char[] password = new char[chars.remaining()];
        chars.get(password);
        Arrays.fill(chars.array(), '\0');
        return password;
    }

    private static boolean stdinIsTerminal() {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/0")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Runs {@code stty SETTING} on the controlling terminal; whether it succeeded. */
    private static boolean stty(String setting) {
        try {
            Process p = new ProcessBuilder("stty", setting).redirectInput(new java.io.File("/dev/tty"))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
