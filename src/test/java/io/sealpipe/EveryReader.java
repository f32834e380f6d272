package io.sealpipe;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The check of the failure tests that no reader reads what a failed writer left: each of a set of
 * named reads must throw an {@link IOException}.
 */
public final class EveryReader {
    private EveryReader() {}

    /** One way to read what was stored; returns what it read. */
    @FunctionalInterface
    public interface Read<T> {
        T read() throws IOException;
    }

    /**
     * Fails if any of {@code readers} returns instead of throwing an IOException; the message is
     * {@code describe} of the reader's name and what it read.
     */
    public static <T> void mustReject(Map<String, Read<T>> readers, BiFunction<String, T, String> describe) {
        readers.forEach((reader, read) -> {
            T back;
            try {
                back = read.read();
            } catch (IOException rejected) {
                return;
            }
            fail(describe.apply(reader, back));
        });
    }
}
