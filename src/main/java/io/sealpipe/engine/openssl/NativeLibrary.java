package io.sealpipe.engine.openssl;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * Loads libsealpipe.so once: from the path in {@value #LIBRARY_PROPERTY} if set, otherwise
 * extracted from the jar ({@code META-INF/native/<platform>/}) into a private temporary
 * directory, loaded, and deleted (the mapping stays valid after the file is unlinked).
 */
final class NativeLibrary {
    static final String LIBRARY_PROPERTY = "sealpipe.native.library";
    private static final String NAME = "libsealpipe.so";

    private NativeLibrary() {}

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osId = os.startsWith("linux") ? "linux" : os.replaceAll("\\W", "");
        String archId = switch (arch) {
            case "amd64", "x86_64" -> "x86-64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return osId + "-" + archId.replace("x86-64", "x86_64");
    }

    /** Loads the library; throws UnsatisfiedLinkError saying what failed and what to do. */
    static void load() {
        String explicit = System.getProperty(LIBRARY_PROPERTY);
        if (explicit != null && !explicit.isBlank()) {
            System.load(Path.of(explicit).toAbsolutePath().toString());
            return;
        }
        String resource = "/META-INF/native/" + platform() + "/" + NAME;
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("no native library for platform " + platform()
                        + " in the jar (" + resource + "); build from source with mvn verify, or set -D"
                        + LIBRARY_PROPERTY + "=/path/to/" + NAME);
            }
            Path dir = Files.createTempDirectory("sealpipe-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path file = dir.resolve(NAME);
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                System.load(file.toString());
            } finally {
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            }
        } catch (IOException e) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError(
                    "cannot extract " + resource + " to a temporary file: " + e.getMessage()
                            + " (set java.io.tmpdir to a writable directory, or -D" + LIBRARY_PROPERTY + ")");
            error.initCause(e);
            throw error;
        }
    }
}
