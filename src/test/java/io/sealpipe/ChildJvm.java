package io.sealpipe;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** How the tests start a child JVM: this JVM's launcher, allowed to load sealpipe's JNI library. */
public final class ChildJvm {
    private ChildJvm() {}

    /**
     * A mutable command line: this JVM's {@code java}, {@code --enable-native-access=ALL-UNNAMED}
     * (accepted since Java 17; from Java 24 on, without it the JVM prints a warning on standard
     * error when a library is loaded, which the tests that read standard error would see), then
     * {@code rest}.
     */
    public static List<String> command(String... rest) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(Arrays.asList(rest));
        return command;
    }
}
