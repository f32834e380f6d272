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
 * caller wipes the array. Either prompt turns echo back on when the JVM is ended while it waits
 * (the JDK's Console by a shutdown hook of its own, the /dev/tty prompt by {@link #prompt}'s).
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
            return prompt(new DevTty(terminal), RUNTIME);
        }
    }

    /** The controlling terminal as {@link #prompt} uses it; the tests give a fake one. */
    interface Terminal {
        /** Turns echo on or off; whether that worked. */
        boolean echo(boolean on);

        void write(byte[] bytes) throws IOException;

        /** The next byte typed, or -1 at the end. */
        int read() throws IOException;
    }

    /** Where {@link #prompt} registers its shutdown hook: the JVM's, or a test's record. */
    interface ShutdownHooks {
        void add(Thread hook);

        void remove(Thread hook);
    }

    private static final ShutdownHooks RUNTIME = new ShutdownHooks() {
        @Override
        public void add(Thread hook) {
            Runtime.getRuntime().addShutdownHook(hook);
        }

        @Override
        public void remove(Thread hook) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook runs (or ran) too: echo on twice is harmless.
            }
        }
    };

    /**
     * Asks for the password on {@code terminal} with echo off, up to the end of the line; null
     * (nothing asked) if echo cannot be turned off. Echo is turned back on however this ends:
     * on return or failure, and when the JVM is ended while the prompt waits (Ctrl-C, that is
     * SIGINT; SIGTERM; SIGHUP), by a shutdown hook that is registered before echo goes off and
     * removed once it is back on. Only SIGKILL leaves echo off ({@code stty echo} or {@code
     * reset} then restores it).
     */
    static char[] prompt(Terminal terminal, ShutdownHooks hooks) throws IOException {
        Thread restoreEcho = new Thread(() -> {
            terminal.echo(true);
            try {
                terminal.write(new byte[] {'\n'}); // the shell's prompt on a line of its own
            } catch (IOException e) {
                // The terminal is gone: nothing to show anything on.
            }
        }, "sealpipe-restore-terminal-echo");
        hooks.add(restoreEcho); // before echo goes off: no moment with echo off and no hook
        try {
            if (!terminal.echo(false)) {
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
                terminal.echo(true);
                terminal.write(new byte[] {'\n'});
            }
        } finally {
            hooks.remove(restoreEcho); // after echo is on: no moment with echo off and no hook
        }
    }

    /** {@code /dev/tty}, open, with echo switched by {@code stty}. */
    private record DevTty(java.io.RandomAccessFile file) implements Terminal {
        @Override
        public boolean echo(boolean on) {
            return stty(on ? "echo" : "-echo");
        }

        @Override
        public void write(byte[] bytes) throws IOException {
            file.write(bytes);
        }

        @Override
        public int read() throws IOException {
            return file.read();
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
