package io.sealpipe.engine.openssl;

import io.sealpipe.engine.EngineSettings;
import io.sealpipe.engine.Platform;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;

/**
 * Loads libsealpipe.so once: from the path in {@value #LIBRARY_PROPERTY} if set (whatever the
 * platform: the user's choice), otherwise extracted from the jar ({@code META-INF/native/<platform>/})
 * into a private temporary directory, loaded, and deleted (the mapping stays valid after the file
 * is unlinked).
 *
 * <p>A library is shipped for {@link #SHIPPED} only, both built for glibc 2.17 or later. On any
 * other platform nothing is loaded and the failure says what runs instead. That includes Linux
 * with musl libc (Alpine): {@link Platform#current()} finds musl in the process's maps before any
 * load, because handing a glibc library to a musl JVM's {@code System.load} can fail obscurely or
 * crash the JVM.
 */
final class NativeLibrary {
    static final String LIBRARY_PROPERTY = "sealpipe.native.library";
    private static final String NAME = "libsealpipe.so";

    /** The platforms the jar holds a libsealpipe for (glibc 2.17 or later). */
    static final List<String> SHIPPED = List.of("linux-x86_64", "linux-aarch64");

    private NativeLibrary() {}

    /**
     * Why no shipped libsealpipe fits a platform, with what runs instead; pure.
     *
     * @param platform where the JVM runs
     * @return the reason, or empty where a library is shipped
     */
    static Optional<String> notShipped(Platform platform) {
        if (SHIPPED.contains(platform.id())) {
            return Optional.empty();
        }
        String glibc = platform.withMusl(false).id();
        String what = platform.musl() && SHIPPED.contains(glibc)
                ? "libsealpipe for " + glibc + " is built for glibc; this JVM runs on musl libc (Alpine): no libsealpipe"
                        + " is shipped for " + platform.id()
                : "no libsealpipe is shipped for " + platform.id();
        String libcrypto = platform.os().equals("linux") ? ""
                : " (name it with -D" + EngineSettings.LIBCRYPTO + "=PATH: the default names are Linux's)";
        // auto takes OpenSSL only where it has read the CPU's AES instructions: on Linux x86 and aarch64.
        boolean cpuRead = platform.os().equals("linux") && (platform.isX86() || platform.arch().equals(Platform.AARCH64));
        String instead = cpuRead
                ? " openssl-jna can take its place where JNA and libcrypto load" + libcrypto + ", otherwise jce runs;"
                : " auto runs jce here (it reads the CPU's AES instructions on Linux x86_64 and aarch64 only);"
                        + " openssl-jna runs where JNA and libcrypto load if forced with -D" + EngineSettings.ENGINE
                        + "=openssl-jna" + libcrypto + ";";
        return Optional.of(what + " (shipped: " + String.join(" and ", SHIPPED) + ", glibc 2.17 or later);"
                + instead + " for a libsealpipe built from source, set -D" + LIBRARY_PROPERTY + "=PATH");
    }

    /** Loads the library for this JVM; throws UnsatisfiedLinkError saying what failed and what to do. */
    static void load() {
        load(Platform.current(), System.getProperty(LIBRARY_PROPERTY));
    }

    /**
     * Loads the library named, or else the jar's for the platform.
     *
     * @param platform where the JVM runs: picks the jar's library, and none is loaded where
     *     {@link #notShipped} has a reason
     * @param explicit the value of {@value #LIBRARY_PROPERTY}, or null or blank for the jar's
     * @throws UnsatisfiedLinkError saying what failed and what to do
     */
    static void load(Platform platform, String explicit) {
        if (explicit != null && !explicit.isBlank()) {
            System.load(Path.of(explicit).toAbsolutePath().toString());
            return;
        }
        Optional<String> notShipped = notShipped(platform);
        if (notShipped.isPresent()) {
            throw new UnsatisfiedLinkError(notShipped.get());
        }
        String resource = "/META-INF/native/" + platform.id() + "/" + NAME;
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("no native library for platform " + platform.id()
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
