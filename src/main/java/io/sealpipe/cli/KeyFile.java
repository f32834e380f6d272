package io.sealpipe.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The key in a {@code --key-file}: 16 or 32 raw bytes, or the same as 32 or 64 hex digits (either
 * case, with or without one trailing newline or CRLF), as {@code openssl rand -hex 32 > key}
 * writes it. Hex is recognised by its form: a raw random key is all hex digits with a
 * probability below 10^-17. Messages give lengths, never the content.
 */
final class KeyFile {
    private KeyFile() {}

    /** The longest content read: 64 hex digits and a CRLF. More is not a key file. */
    static final int MAX_LENGTH = 66;

    /**
     * The key bytes of {@code file}; the caller zeroes them.
     *
     * @throws IOException when the file cannot be read
     * @throws IllegalArgumentException naming the accepted forms when it holds neither
     */
    static byte[] read(Path file) throws IOException {
        byte[] content;
        try (InputStream in = Files.newInputStream(file)) {
            content = in.readNBytes(MAX_LENGTH + 1);
        }
        try {
            return decode(content);
        } finally {
            Arrays.fill(content, (byte) 0);
        }
    }

    /** The key that {@code content} holds, in a new array. */
    static byte[] decode(byte[] content) {
        int n = content.length;
        if (n > 0 && content[n - 1] == '\n') {
            n -= n > 1 && content[n - 2] == '\r' ? 2 : 1;
        }
        if ((n == 32 || n == 64) && isHex(content, n)) {
            byte[] key = new byte[n / 2];
            for (int i = 0; i < key.length; i++) {
                key[i] = (byte) (Character.digit(content[2 * i], 16) << 4 | Character.digit(content[2 * i + 1], 16));
            }
            return key;
        }
        if (content.length == 16 || content.length == 32) {
            return content.clone();
        }
        throw new IllegalArgumentException("--key-file holds " + (content.length > MAX_LENGTH ? "more than "
                + MAX_LENGTH : content.length) + " bytes: it must hold the key as 16 or 32 raw bytes, or as 32 or 64"
                + " hex digits (a trailing newline is fine)");
    }

    private static boolean isHex(byte[] content, int n) {
        for (int i = 0; i < n; i++) {
            if (Character.digit(content[i], 16) < 0) {
                return false;
            }
        }
        return true;
    }
}
