package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The warning line that every run with {@code --key-hex} prints first, once its arguments are good. */
final class KeyHexWarning {
    private KeyHexWarning() {}

    static final String LINE = "sealpipe: warning: --key-hex shows the key to every user of this machine"
            + " (ps, /proc/PID/cmdline): use --key-file (raw bytes or hex)";

    /** What {@code err} holds after the warning, which must be its first line. */
    static String after(String err) {
        assertTrue(err.startsWith(LINE + System.lineSeparator()), "the --key-hex warning first: " + err);
        return err.substring(LINE.length() + System.lineSeparator().length());
    }
}
