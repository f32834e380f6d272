package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Platform ids from {@code os.name} and {@code os.arch}, and musl detection on fixture maps. */
class PlatformTest {

    @Test
    void osAndArchAreNormalised() {
        assertEquals("macos-aarch64", Platform.of("Mac OS X", "aarch64").id());
        assertEquals("windows-x86_64", Platform.of("Windows 11", "amd64").id());
        assertEquals("linux-x86_64", Platform.of("Linux", "x86_64").id());
        assertEquals("linux-x86_64", Platform.of("Linux", "amd64").id());
        assertEquals("linux-aarch64", Platform.of("Linux", "aarch64").id());
        assertEquals("linux-ppc64le", Platform.of("Linux", "ppc64le").id());
        assertEquals("freebsd-x86_64", Platform.of("FreeBSD", "amd64").id());
        assertEquals("macos-aarch64", Platform.of("Mac OS X", "arm64").id());
        assertEquals("windows-x86_64", Platform.of("Windows Server 2022", "AMD64").id());
        assertEquals("sunos-sparcv9", Platform.of("SunOS", "sparcv9").id());
    }

    @Test
    void muslIsPartOfTheId() {
        Platform alpine = Platform.of("Linux", "amd64").withMusl(true);
        assertEquals("linux-x86_64-musl", alpine.id());
        assertEquals("linux", alpine.os());
        assertEquals("x86_64", alpine.arch());
    }

    /** Maps of a glibc JVM (OpenJDK 17 on Debian, trimmed) and of a musl JVM (Alpine's openjdk17 layout). */
    @Test
    void muslIsFoundInTheMapsOfAMuslJvmOnly() throws IOException {
        assertFalse(Platform.muslIn(fixture("maps-glibc-x86_64.txt")), "glibc JVM");
        assertTrue(Platform.muslIn(fixture("maps-musl-x86_64.txt")), "musl JVM");
        assertTrue(Platform.muslIn(List.of(
                "ffff9a3c0000-ffff9a45c000 r-xp 00000000 00:5d 1048599   /lib/ld-musl-aarch64.so.1")), "aarch64 musl");
        assertFalse(Platform.muslIn(List.of(
                "7f3cae972000-7f3cae998000 r--p 00000000 fe:00 1   /home/ld-musl-notes/libc.so.6")),
                "a directory named like musl is not musl");
        assertFalse(Platform.muslIn(List.of()), "nothing read");
    }

    @Test
    void unreadableMapsMeanGlibc(@TempDir Path dir) {
        assertFalse(Platform.muslIn(dir.resolve("no-such-maps")));
    }

    private static List<String> fixture(String name) throws IOException {
        try (InputStream in = PlatformTest.class.getResourceAsStream("/platform/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
    }
}
