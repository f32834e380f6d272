package io.sealpipe.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.ChildJvm;
import io.sealpipe.gcm.GcmStreams;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The real {@code sealpipe.openssl.libcrypto} property pointing at nothing, in a child JVM
 * because engines load once per process: auto and the builders that use it fail, saying why,
 * instead of falling back to JCE; the report shows the same decision; JCE asked for by name
 * still works.
 */
class ExplicitLibcryptoTest {
    private static final String MISSING = "/nonexistent/libcrypto.so.3";

    /** Runs in the child JVM: prints the report, then what each call gave. */
    public static final class Child {
        public static void main(String[] args) {
            System.out.print(Engines.report().describe());
            try {
                System.out.println("auto: " + Engines.auto().kind().id());
            } catch (EngineUnavailableException e) {
                System.out.println("auto failed: " + e.getMessage());
            }
            try {
                System.out.println("builder: " + GcmStreams.builder().key(new byte[32]).build().engine().kind().id());
            } catch (EngineUnavailableException e) {
                System.out.println("builder failed: " + e.getMessage());
            }
            System.out.println("jce: " + Engines.get(EngineKind.JCE).kind().id());
        }
    }

    @Test
    void aLibcryptoPathThatDoesNotLoadIsAnError() throws Exception {
        List<String> command = ChildJvm.command(
                "-cp", System.getProperty("java.class.path"), "-D" + EngineSettings.LIBCRYPTO + "=" + MISSING,
                Child.class.getName());
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        assertEquals(0, p.exitValue(), out);

        String decision = "sealpipe.openssl.libcrypto=" + MISSING + " did not load (openssl-jni: libcrypto did not load: ";
        assertTrue(out.contains("Chosen:  none: " + decision), out);
        assertTrue(out.contains("auto failed: " + decision), out);
        assertTrue(out.contains("builder failed: " + decision), out);
        assertTrue(out.contains("No such file or directory"), "the reason from dlopen: " + out);
        assertTrue(out.contains("fix the path or unset the property"), out);
        assertTrue(out.contains("jce: jce"), out);
    }
}
