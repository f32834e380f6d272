package io.sealpipe.engine.openssl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.MachineRequirement;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ELF of each libsealpipe.so the build puts in the jar (target/classes): the architecture of
 * its folder, nothing needed beyond glibc's libc, libdl and libpthread, no glibc symbol version
 * newer than the baseline it promises (2.17, manylinux2014's: RHEL/CentOS 7, Amazon Linux 2 and
 * every later glibc), only the JNI entry points exported, and the hardening of the build
 * (full RELRO, no executable stack). Read with binutils' readelf, which reads every architecture.
 */
class ShippedLibrariesTest {
    /** A run of printable bytes that names an absolute path: a slash, a directory's name, a slash. */
    private static final Pattern PATH = Pattern.compile("/[\\w.+-]+/");

    /** The platforms the jar ships, and the ELF machine each library must be built for. */
    private static final Map<String, String> SHIPPED = Map.of(
            "linux-x86_64", "Advanced Micro Devices X86-64",
            "linux-aarch64", "AArch64");

    /** The newest glibc symbol version a shipped library may need. */
    private static final int[] GLIBC_BASELINE = {2, 17};

    private static final Set<String> ALLOWED_NEEDED = Set.of("libc.so.6", "libdl.so.2", "libpthread.so.0");

    @Test
    void theJarShipsExactlyTheLinuxX8664AndAarch64Libraries() throws IOException {
        Path nativeRoot = library("linux-x86_64").getParent().getParent();
        Set<String> found = new TreeSet<>();
        try (Stream<Path> files = Files.walk(nativeRoot)) {
            files.filter(Files::isRegularFile).forEach(f -> found.add(nativeRoot.relativize(f).toString()));
        }
        // Each library with what built it (libsealpipe.properties, for sealpipe --version).
        assertEquals(Set.of("linux-aarch64/libsealpipe.so", "linux-aarch64/libsealpipe.properties",
                "linux-x86_64/libsealpipe.so", "linux-x86_64/libsealpipe.properties"), found);
    }

    @ParameterizedTest
    @ValueSource(strings = {"linux-x86_64", "linux-aarch64"})
    void isA64BitSharedObjectForItsPlatformsArchitecture(String platform) {
        String header = readelf(platform, "--file-header");
        assertEquals("ELF64", field(header, "Class"), platform);
        assertTrue(field(header, "Type").startsWith("DYN"), platform + ": " + field(header, "Type"));
        assertEquals(SHIPPED.get(platform), field(header, "Machine"), platform);
    }

    @ParameterizedTest
    @ValueSource(strings = {"linux-x86_64", "linux-aarch64"})
    void needsNothingButGlibc(String platform) {
        List<String> needed = matches(readelf(platform, "--dynamic"), "\\(NEEDED\\)\\s+Shared library: \\[(.+)]");
        assertTrue(needed.contains("libc.so.6"), platform + " needs " + needed);
        assertTrue(ALLOWED_NEEDED.containsAll(needed), platform + " needs " + needed + "; allowed: " + ALLOWED_NEEDED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"linux-x86_64", "linux-aarch64"})
    void needsNoGlibcNewerThanTheBaseline(String platform) {
        List<String> versions = matches(readelf(platform, "--version-info"), "Name: (GLIBC_\\S+)");
        assertTrue(!versions.isEmpty(), platform + ": no GLIBC_ version needed at all: readelf's output changed?");
        // GLIBC_PRIVATE (or any other name) is no release at all: glibc may change it in any version.
        for (String v : versions) {
            assertTrue(v.matches("GLIBC_\\d+(\\.\\d+)+"), platform + " needs " + v + ", which is not a glibc release");
        }
        String newest = versions.stream().max(ShippedLibrariesTest::compareGlibc).orElseThrow();
        assertTrue(compareGlibc(newest, "GLIBC_" + GLIBC_BASELINE[0] + "." + GLIBC_BASELINE[1]) <= 0,
                platform + " needs " + newest + " (all: " + new TreeSet<>(versions) + "); the baseline is glibc "
                        + GLIBC_BASELINE[0] + "." + GLIBC_BASELINE[1]);
        // Nothing from libc outside a versioned symbol either: every undefined function is versioned.
        List<String> unversioned = new ArrayList<>();
        for (String line : readelf(platform, "--dyn-syms", "--wide").split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 8 && f[0].matches("\\d+:") && f[6].equals("UND") && !f[7].contains("@") && !f[4].equals("WEAK")) {
                unversioned.add(f[7]);
            }
        }
        assertEquals(List.of(), unversioned, platform + ": undefined symbols without a version");
    }

    @ParameterizedTest
    @ValueSource(strings = {"linux-x86_64", "linux-aarch64"})
    void exportsOnlyTheJniEntryPoints(String platform) {
        List<String> exported = new ArrayList<>();
        for (String line : readelf(platform, "--dyn-syms", "--wide").split("\n")) {
            // Num: Value Size Type Bind Vis Ndx Name
            String[] f = line.trim().split("\\s+");
            if (f.length >= 8 && f[0].matches("\\d+:") && !f[6].equals("UND") && !f[4].equals("LOCAL")
                    && !f[3].equals("SECTION") && !f[3].equals("FILE")) {
                exported.add(f[7]);
            }
        }
        // JNI_OnLoad registers the natives of the bridge class (RegisterNatives): no Java_* needed.
        assertTrue(exported.contains("JNI_OnLoad"), platform + " exports " + exported);
        List<String> others = exported.stream().filter(s -> !s.equals("JNI_OnLoad") && !s.startsWith("Java_")).toList();
        assertEquals(List.of(), others, platform + " exports more than Java_* and JNI_OnLoad");
    }

    @ParameterizedTest
    @ValueSource(strings = {"linux-x86_64", "linux-aarch64"})
    void isHardenedLikeTheBuildAsks(String platform) {
        String dynamic = readelf(platform, "--dynamic");
        assertTrue(dynamic.contains("BIND_NOW") || dynamic.matches("(?s).*FLAGS_1\\).*\\bNOW\\b.*"),
                platform + ": no BIND_NOW (-z now)");
        String segments = readelf(platform, "--program-headers", "--wide");
        assertTrue(segments.contains("GNU_RELRO"), platform + ": no GNU_RELRO (-z relro)");
        Matcher stack = Pattern.compile("GNU_STACK(?:\\s+\\S+){5}\\s+(\\S+)").matcher(segments);
        assertTrue(stack.find(), platform + ": no GNU_STACK header");
        assertEquals("RW", stack.group(1), platform + ": the stack must not be executable (-z noexecstack)");
        // _FORTIFY_SOURCE: the checked variant of the formatting call the library makes.
        assertTrue(readelf(platform, "--dyn-syms", "--wide").contains("__vsnprintf_chk"),
                platform + ": built without _FORTIFY_SOURCE (no __vsnprintf_chk)");
    }

    /**
     * Reproducible anywhere: no absolute path of the build machine (the checkout, the JDK, zig's
     * directory, the home directory) in the library, its debug information included; the
     * Makefile maps each to a relative name (-ffile-prefix-map).
     */
    @ParameterizedTest
    @ValueSource(strings = {"linux-x86_64", "linux-aarch64"})
    void namesNoPathOfTheBuildMachine(String platform) throws IOException {
        byte[] bytes = Files.readAllBytes(library(platform));
        List<String> paths = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (int i = 0; i <= bytes.length; i++) {
            int b = i < bytes.length ? bytes[i] & 0xff : 0;
            if (b >= 0x20 && b < 0x7f) {
                text.append((char) b);
                continue;
            }
            // A directory and more, as a build machine's paths are ("/work/..."): not any run that
            // starts with a slash, which the debug sections' numbers make by chance ("/ 55").
            if (PATH.matcher(text).lookingAt()) {
                paths.add(text.toString());
            }
            text.setLength(0);
        }
        assertEquals(List.of(), paths, platform + ": absolute paths in the library, which another machine's"
                + " build would not have (see -ffile-prefix-map in src/main/native/Makefile)");
    }

    @Test
    void theAarch64LibraryHasNoOutlineAtomicsHelpers() {
        String symbols = readelf("linux-aarch64", "--syms", "--wide");
        assertEquals(List.of(), matches(symbols, "\\b(__aarch64_\\w+)"),
                "outline atomics helpers (built without -mno-outline-atomics?)");
    }

    /** Compares GLIBC_a.b[.c] versions numerically. */
    static int compareGlibc(String a, String b) {
        String[] x = a.substring("GLIBC_".length()).split("\\.");
        String[] y = b.substring("GLIBC_".length()).split("\\.");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int xi = i < x.length ? Integer.parseInt(x[i]) : 0;
            int yi = i < y.length ? Integer.parseInt(y[i]) : 0;
            if (xi != yi) {
                return Integer.compare(xi, yi);
            }
        }
        return 0;
    }

    @Test
    void glibcVersionsCompareNumerically() {
        assertTrue(compareGlibc("GLIBC_2.2.5", "GLIBC_2.17") < 0);
        assertTrue(compareGlibc("GLIBC_2.34", "GLIBC_2.17") > 0);
        assertTrue(compareGlibc("GLIBC_2.17", "GLIBC_2.17") == 0);
        assertTrue(compareGlibc("GLIBC_2.3.4", "GLIBC_2.3") > 0);
    }

    private static Path library(String platform) {
        URL url = ShippedLibrariesTest.class.getResource("/META-INF/native/" + platform + "/libsealpipe.so");
        assertTrue(url != null && url.getProtocol().equals("file"),
                "no " + platform + " library in target/classes: mvn process-classes builds both (" + url + ")");
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String readelf(String platform, String... options) {
        List<String> command = new ArrayList<>(List.of("readelf"));
        command.addAll(List.of(options));
        command.add(library(platform).toString());
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int status = process.waitFor();
            assertEquals(0, status, String.join(" ", command) + " failed: " + out);
            return out;
        } catch (IOException e) {
            throw MachineRequirement.unmet("readelf (binutils) cannot be run: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String field(String header, String name) {
        Matcher m = Pattern.compile("^\\s*" + name + ":\\s*(.+?)\\s*$", Pattern.MULTILINE).matcher(header);
        assertTrue(m.find(), "no " + name + " in readelf's header: " + header);
        return m.group(1);
    }

    private static List<String> matches(String text, String regex) {
        List<String> found = new ArrayList<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }
}
