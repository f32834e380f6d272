package io.sealpipe.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The operating system, CPU architecture and C library this JVM runs on, named as sealpipe
 * names them: the id picks the libsealpipe in the jar ({@code META-INF/native/<id>/}), and says
 * whether auto's rule was measured here ({@link EngineReport#autoMeasured()}). Immutable.
 *
 * <p>Ids: {@code linux-x86_64} and {@code linux-aarch64} (glibc; the two a libsealpipe is shipped
 * for), {@code linux-x86_64-musl} (Alpine), {@code macos-aarch64}, {@code windows-x86_64},
 * {@code freebsd-x86_64}, {@code linux-ppc64le}.
 *
 * <pre>{@code
 * Platform.of("Mac OS X", "aarch64").id();   // "macos-aarch64"
 * Platform.current().id();                   // "linux-x86_64" on a glibc x86-64 Linux
 * }</pre>
 *
 * @param os {@code linux}, {@code macos}, {@code windows}, or else {@code os.name} in lower case
 *     with everything but letters and digits removed ({@code freebsd}, {@code sunos})
 * @param arch {@code x86_64} ({@code os.arch} {@code amd64} or {@code x86_64}), {@code aarch64}
 *     ({@code aarch64} or {@code arm64}), or else {@code os.arch} in lower case ({@code ppc64le})
 * @param musl whether the C library is musl (Alpine) instead of glibc; false off Linux
 */
public record Platform(String os, String arch, boolean musl) {
    /** {@link #arch()} of x86-64 (AMD64) JVMs. */
    public static final String X86_64 = "x86_64";
    /** {@link #arch()} of 64-bit Arm JVMs. */
    public static final String AARCH64 = "aarch64";

    /** musl's dynamic loader, which is its libc too: {@code /lib/ld-musl-x86_64.so.1} (or the libc.musl link). */
    private static final Pattern MUSL_LIBRARY = Pattern.compile(".*/(ld-musl-|libc\\.musl-)[^/\\s]*\\.so\\.1");

    /**
     * A platform as named; {@link #of} names it from the JVM's properties.
     *
     * @param os the operating system, as in {@link #os()}
     * @param arch the CPU architecture, as in {@link #arch()}
     * @param musl whether the C library is musl
     * @throws NullPointerException if os or arch is null
     */
    public Platform {
        Objects.requireNonNull(os, "os");
        Objects.requireNonNull(arch, "arch");
    }

    private static final class Current {
        static final Platform PLATFORM = detect();

        private static Platform detect() {
            Platform p = of(System.getProperty("os.name", "unknown"), System.getProperty("os.arch", "unknown"));
            return p.os().equals("linux") ? p.withMusl(muslIn(Path.of("/proc/self/maps"))) : p;
        }
    }

    /**
     * This JVM's platform, from {@code os.name} and {@code os.arch}, and on Linux from the C
     * library mapped into this process ({@code /proc/self/maps}). Read once per JVM; never throws.
     *
     * @return the platform of this JVM
     */
    public static Platform current() {
        return Current.PLATFORM;
    }

    /**
     * Names a platform from the JVM's {@code os.name} and {@code os.arch}, with glibc on Linux.
     *
     * @param osName e.g. {@code Linux}, {@code Mac OS X}, {@code Windows 11}, {@code FreeBSD}
     * @param osArch e.g. {@code amd64}, {@code x86_64}, {@code aarch64}, {@code ppc64le}
     * @return the platform
     */
    public static Platform of(String osName, String osArch) {
        String name = osName.toLowerCase(Locale.ROOT);
        String os = name.startsWith("linux") ? "linux"
                : name.startsWith("mac") || name.startsWith("darwin") ? "macos"
                : name.startsWith("windows") ? "windows"
                : name.replaceAll("[^a-z0-9]", "");
        String arch = osArch.toLowerCase(Locale.ROOT);
        arch = switch (arch) {
            case "amd64", "x86_64", "x86-64" -> X86_64;
            case "aarch64", "arm64" -> AARCH64;
            default -> arch.replaceAll("[^a-z0-9_]", "");
        };
        return new Platform(os.isEmpty() ? "unknown" : os, arch.isEmpty() ? "unknown" : arch, false);
    }

    /**
     * The same OS and architecture with another C library.
     *
     * @param musl whether the C library is musl
     * @return the platform with that C library
     */
    public Platform withMusl(boolean musl) {
        return new Platform(os, arch, musl);
    }

    /**
     * The platform's name, as in the jar's {@code META-INF/native/<id>/} and in {@code sealpipe info}.
     *
     * @return {@code os-arch}, with {@code -musl} appended on musl
     */
    public String id() {
        return os + "-" + arch + (musl ? "-musl" : "");
    }

    /**
     * Whether the CPU is x86 (64 or 32 bits): where {@code cpuid}, AES-NI and AVX-512 exist.
     *
     * @return true for {@code x86_64}, {@code x86} and {@code i386} to {@code i686}
     */
    public boolean isX86() {
        return isX86(arch);
    }

    /**
     * Whether an architecture, as in {@link #arch()}, is x86 (64 or 32 bits).
     *
     * @param arch an architecture, e.g. {@code x86_64} or {@code aarch64}
     * @return true for {@code x86_64}, {@code x86} and {@code i386} to {@code i686}
     */
    public static boolean isX86(String arch) {
        return arch.equals(X86_64) || arch.matches("x86|i[3-6]86");
    }

    /**
     * Whether a process's memory maps show musl's C library (which is also its dynamic loader,
     * {@code ld-musl-<arch>.so.1}). Pure, so that tests can feed the maps of a glibc JVM and of a
     * musl JVM.
     *
     * @param maps the lines of {@code /proc/<pid>/maps}
     * @return true if a mapped file is musl's libc
     */
    static boolean muslIn(List<String> maps) {
        return maps.stream().anyMatch(Platform::isMuslLine);
    }

    /**
     * {@link #muslIn(List)} over a maps file.
     *
     * @param maps e.g. {@code /proc/self/maps}
     * @return true if it shows musl; false if not or if it cannot be read (glibc is then assumed)
     */
    static boolean muslIn(Path maps) {
        try (Stream<String> lines = Files.lines(maps)) {
            return lines.anyMatch(Platform::isMuslLine);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean isMuslLine(String line) {
        return MUSL_LIBRARY.matcher(line.strip()).matches();
    }

    @Override
    public String toString() {
        return id();
    }
}
