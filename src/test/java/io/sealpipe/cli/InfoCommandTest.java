package io.sealpipe.cli;

import io.sealpipe.ChildJvm;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Platform;
import io.sealpipe.engine.TestEngines;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code sealpipe info} in child JVMs, because loading is once per process: each case starts
 * java with its own system properties, as a user would, and reads the JSON report.
 */
class InfoCommandTest {

    record Result(int exitCode, String out, String err) {}

    static Result run(List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.addAll(ChildJvm.command());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.addAll(jvmOptions);
        command.add(Main.class.getName());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().remove("OPENSSL_ia32cap");
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    static JsonNode json(Result r) throws IOException {
        return new ObjectMapper().readTree(r.out());
    }

    @Test
    void defaultReportsEveryEngineAndTheChoice() throws Exception {
        Result r = run(List.of(), "info", "--json");
        assertEquals(0, r.exitCode(), r.err());
        JsonNode report = json(r);
        for (String key : List.of("engine", "openssl_version", "aesni", "engines")) {
            assertTrue(report.has(key), "missing " + key + " in " + r.out());
        }
        for (EngineKind kind : EngineKind.values()) {
            JsonNode e = report.get("engines").get(kind.id());
            assertTrue(e.has("available") && e.has("reason"), r.out());
        }
        if (TestEngines.inCi()) {
            // CI must exercise the native engine: the machine has AES-NI and OpenSSL 3.
            assertEquals("openssl-jni", report.get("engine").asText(), r.out());
            // info loads accp, which otherwise loads in the background: it names the version it found.
            assertTrue(report.get("engines").get("accp").get("reason").asText()
                    .startsWith("Amazon Corretto Crypto Provider 2.5"), r.out());
        }
        assertEquals(Engines.report().chosen().map(EngineKind::id).orElse(null), report.get("engine").asText());
        assertEquals(Platform.current().id(), report.get("platform").asText(), r.out());
        assertEquals(Engines.report().autoMeasured(), report.get("auto_measured").asBoolean(), r.out());
        assertEquals(Platform.current().arch(), report.get("cpu").get("arch").asText(), r.out());
        if (TestEngines.inCi()) {
            assertTrue(report.get("auto_measured").asBoolean(), "CI runs on linux-x86_64, where the rule was measured");
            assertTrue(report.get("auto_note").isNull(), r.out());
        }
        JsonNode operations = report.get("operations");
        java.util.List<String> names = new java.util.ArrayList<>();
        operations.fieldNames().forEachRemaining(names::add);
        assertEquals(List.of("ctr", "gcm-seal", "gcm-open", "cfb", "hmac-sha256"), names, r.out());
        for (io.sealpipe.engine.Operation op : io.sealpipe.engine.Operation.values()) {
            String engine = operations.get(op.id()).asText();
            assertEquals(Engines.report().operation(op).engine().map(EngineKind::id).orElse(null), engine, op.id());
            assertTrue(report.get("operation_choices").get(op.id()).get("reason").asText().length() > 0, r.out());
        }
    }

    @Test
    void perOperationPropertiesAreReportedAndTheirMistakesExitTwo() throws Exception {
        JsonNode report = json(run(List.of("-Dsealpipe.engine.ctr=jce", "-Dsealpipe.engine.gcm=jce"), "info", "--json"));
        assertEquals("jce", report.get("operations").get("ctr").asText(), report.toString());
        assertEquals("jce", report.get("operations").get("gcm-open").asText(), report.toString());
        assertTrue(report.get("operation_choices").get("ctr").get("reason").asText()
                .contains("forced by sealpipe.engine.ctr=jce"), report.toString());
        Result typo = run(List.of("-Dsealpipe.engine.gmc=jce"), "info");
        assertEquals(2, typo.exitCode(), typo.out() + typo.err());
        assertTrue(typo.err().contains("sealpipe.engine.gmc"), typo.err());
    }

    @Test
    void simulatedNoAesniChoosesJce() throws Exception {
        JsonNode report = json(run(List.of("-Dsealpipe.cpu.aesni=false"), "info", "--json"));
        assertEquals("jce", report.get("engine").asText());
        assertFalse(report.get("aesni").asBoolean());
        assertTrue(report.get("engines").get("openssl-jni").get("not_chosen_because").asText().contains("no AES-NI"));
    }

    /** os.name and os.arch are what sealpipe reads: a JVM told it runs on macOS on Apple silicon. */
    @Test
    void aPlatformWithoutAShippedLibrarySaysSoAndThatAutoIsNotMeasured() throws Exception {
        Result r = run(List.of("-Dos.name=Mac OS X", "-Dos.arch=aarch64"), "info", "--json");
        JsonNode report = json(r);
        assertEquals("macos-aarch64", report.get("platform").asText(), r.out());
        assertFalse(report.get("auto_measured").asBoolean(), r.out());
        assertTrue(report.get("auto_note").asText().startsWith("auto's rule is not measured on macos-aarch64: run"
                + " `sealpipe speed` here"), r.out());
        JsonNode jni = report.get("engines").get("openssl-jni");
        assertFalse(jni.get("available").asBoolean(), r.out());
        assertTrue(jni.get("reason").asText().contains("no libsealpipe is shipped for macos-aarch64 (shipped:"
                + " linux-x86_64 and linux-aarch64, glibc 2.17 or later)"), r.out());
        assertEquals("aarch64", report.get("cpu").get("arch").asText(), r.out());
        assertFalse(report.get("aesni").asBoolean(), "/proc/cpuinfo is Linux's: it says nothing of a Mac: " + r.out());
        assertEquals("unknown", report.get("cpu").get("source").asText(), r.out());

        Result text = run(List.of("-Dos.name=Mac OS X", "-Dos.arch=aarch64"), "info");
        assertTrue(text.out().contains("Platform: macos-aarch64\n"), text.out());
        assertTrue(text.out().contains("Note:    auto's rule is not measured on macos-aarch64"), text.out());
    }

    @Test
    void libcryptoPointingNowhereIsAnErrorWithReasons() throws Exception {
        Result r = run(List.of("-Dsealpipe.openssl.libcrypto=/nonexistent/libcrypto.so.3"), "info", "--json");
        assertEquals(1, r.exitCode(), r.out() + r.err());
        JsonNode report = json(r);
        assertTrue(report.get("engine").isNull(), r.out());
        assertTrue(report.get("decision").asText().contains(
                "sealpipe.openssl.libcrypto=/nonexistent/libcrypto.so.3 did not load"), r.out());
        for (String kind : List.of("openssl-jni", "openssl-jna")) {
            JsonNode e = report.get("engines").get(kind);
            assertFalse(e.get("available").asBoolean(), kind);
            assertTrue(e.get("reason").asText().contains("/nonexistent/libcrypto.so.3"), e.toString());
        }
        assertTrue(report.get("openssl_version").isNull());
    }

    @Test
    void requireOpenSslWithoutOpenSslIsAClearError() throws Exception {
        Result r = run(List.of("-Dsealpipe.openssl.libcrypto=/nonexistent/libcrypto.so.3",
                "-Dsealpipe.engine.require=openssl"), "info");
        assertEquals(1, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("Chosen:  none: sealpipe.openssl.libcrypto=/nonexistent/libcrypto.so.3 did not load"),
                r.out());
    }

    @Test
    void forcedEnginesAreReported() throws Exception {
        for (EngineKind kind : EngineKind.values()) {
            if (!Engines.report().status(kind).available()) {
                continue;
            }
            JsonNode report = json(run(List.of("-Dsealpipe.engine=" + kind.id()), "info", "--json"));
            assertEquals(kind.id(), report.get("engine").asText());
            assertTrue(report.get("decision").asText().contains("forced"));
        }
    }

    @Test
    void badArgumentsAndBadPropertiesExitTwo() throws Exception {
        Result unknown = run(List.of(), "info", "--bogus");
        assertEquals(2, unknown.exitCode());
        // The position, not the text: what was typed may be a key (UsageErrorTest).
        assertTrue(unknown.err().contains("unknown option at argument 2"), unknown.err());
        Result noCommand = run(List.of());
        assertEquals(2, noCommand.exitCode());
        Result badEngine = run(List.of("-Dsealpipe.engine=fast"), "info");
        assertEquals(2, badEngine.exitCode(), badEngine.out() + badEngine.err());
        assertTrue(badEngine.err().contains("sealpipe.engine=fast"), badEngine.err());
    }
}
