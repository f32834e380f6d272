package io.sealpipe.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineReport;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.EngineUnavailableException;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.OperationChoice;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sealpipe info [--json]}: CPU features, the platform, OpenSSL, each engine, and the engine
 * auto chose, with a note where auto's rule was not measured. The JSON keys are a contract: new
 * ones may be added, none renamed ({@code aesni} and {@code pclmulqdq} keep their x86 names on
 * aarch64, where they mean ARMv8 AES and PMULL).
 */
@Command(name = "info", mixinStandardHelpOptions = true,
        description = "Show CPU features, OpenSSL version and path, each engine's availability, and the engine"
                + " auto chose for each operation (ctr, gcm-seal, gcm-open, cfb, hmac-sha256) with the reason.")
final class InfoCommand implements Callable<Integer> {

    @Option(names = "--json", description = "Print the report as one JSON object.")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (Engines.report().status(EngineKind.ACCP).available()) {
            try {
                Engines.get(EngineKind.ACCP); // loads it (about 0.3 s): the report then names its version
            } catch (EngineUnavailableException e) {
                // the report says why
            }
        }
        EngineReport report = Engines.report();
        if (json) {
            ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            spec.commandLine().getOut().println(mapper.writeValueAsString(toJson(report)));
        } else {
            spec.commandLine().getOut().print(report.describe());
        }
        return report.chosen().isPresent() ? Main.OK : Main.FAILED;
    }

    static Map<String, Object> toJson(EngineReport report) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("engine", report.chosen().map(k -> k.id()).orElse(null));
        root.put("decision", report.decision());
        root.put("platform", report.platform().id());
        root.put("auto_measured", report.autoMeasured());
        root.put("auto_note", report.autoNote().orElse(null));
        root.put("openssl_version", report.opensslVersion().orElse(null));
        root.put("openssl_path", report.opensslPath().orElse(null));
        root.put("aesni", report.cpu().aesni());
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("arch", report.cpu().arch());
        cpu.put("aesni", report.cpu().aesni()); // hardware AES: AES-NI on x86, ARMv8 AES on aarch64
        cpu.put("pclmulqdq", report.cpu().pclmulqdq());
        cpu.put("avx2", report.cpu().avx2());
        cpu.put("vaes", report.cpu().vaes());
        cpu.put("vpclmulqdq", report.cpu().vpclmulqdq());
        cpu.put("avx512", report.cpu().avx512());
        cpu.put("source", report.cpu().source());
        cpu.put("aesni_simulated_off", report.cpu().aesniSimulatedOff());
        root.put("cpu", cpu);
        Map<String, Object> engines = new LinkedHashMap<>();
        for (EngineStatus s : report.engines()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("available", s.available());
            e.put("reason", s.reason());
            e.put("chosen", report.chosen().filter(k -> k == s.kind()).isPresent());
            e.put("not_chosen_because", report.notChosen().get(s.kind()));
            engines.put(s.kind().id(), e);
        }
        root.put("engines", engines);
        Map<String, Object> operations = new LinkedHashMap<>();
        Map<String, Object> why = new LinkedHashMap<>();
        for (OperationChoice c : report.operations().values()) {
            operations.put(c.operation().id(), c.engine().map(EngineKind::id).orElse(null));
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("engine", c.engine().map(EngineKind::id).orElse(null));
            o.put("until_ready", c.until().map(EngineKind::id).orElse(null));
            o.put("reason", c.reason());
            why.put(c.operation().id(), o);
        }
        root.put("operations", operations);
        root.put("operation_choices", why);
        Map<String, Object> jvm = new LinkedHashMap<>();
        jvm.put("feature", report.jvm().feature());
        jvm.put("vm", report.jvm().vmName());
        jvm.put("use_avx", report.jvm().useAvx().isPresent() ? report.jvm().useAvx().getAsInt() : null);
        root.put("java", jvm);
        return root;
    }
}
