package io.sealpipe.engine.openssl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.TestEngines;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Runs only in the sanitizer run ({@code src/test/sanitize/run}, which sets
 * {@value #SANITIZE_PROPERTY}): proves that the tests there really exercise the instrumented
 * library. A silent fallback to the jar's copy would make the run pass without checking
 * anything, so the script also fails if this test did not run.
 */
@EnabledIfSystemProperty(named = SanitizedLibraryTest.SANITIZE_PROPERTY, matches = "true")
class SanitizedLibraryTest {
    static final String SANITIZE_PROPERTY = "sealpipe.test.sanitize";

    @Test
    void theInstrumentedLibraryIsTheOneLoaded() throws IOException {
        TestEngines.engine(EngineKind.OPENSSL_JNI); // loads the library, or fails in CI
        String named = System.getProperty(NativeLibrary.LIBRARY_PROPERTY);
        assertTrue(named != null && !named.isBlank(), NativeLibrary.LIBRARY_PROPERTY + " must name the sanitized build");
        String expected = Path.of(named).toRealPath().toString();

        // The kernel's view of this process: which files are mapped, whatever the loader did.
        List<String> mapped = Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .map(line -> line.split("\\s+", 6))
                .filter(fields -> fields.length == 6)
                .map(fields -> fields[5])
                .distinct()
                .collect(Collectors.toList());
        List<String> sealpipe = mapped.stream().filter(file -> file.contains("libsealpipe")).collect(Collectors.toList());
        assertEquals(List.of(expected), sealpipe, "the sanitized libsealpipe.so, and no other copy, must be mapped");
        List<String> libraries = mapped.stream().filter(file -> file.matches(".*\\.so[.0-9]*")).collect(Collectors.toList());
        assertTrue(libraries.stream().anyMatch(file -> file.matches(".*/libasan\\.so[.0-9]*")),
                "the ASan runtime must be loaded (LD_PRELOAD): " + libraries);
        // Instrumented code calls the ASan runtime's checks, so their names are in its symbol table.
        String image = new String(Files.readAllBytes(Path.of(expected)), StandardCharsets.ISO_8859_1);
        assertTrue(image.contains("__asan_report_") && image.contains("__ubsan_handle_"),
                expected + " must be built with -fsanitize=address,undefined");
    }
}
