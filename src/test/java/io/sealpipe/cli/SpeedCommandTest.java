package io.sealpipe.cli;

import io.sealpipe.cli.CliRun.Result;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Operation;
import io.sealpipe.engine.TestEngines;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sealpipe speed}: a short run's JSON and chart, and the bad arguments. */
class SpeedCommandTest {
    static final List<String> MODES = List.of("gcm-stream", "ctr-stream", "gcm", "ctr", "cfb", "hmac-sha256",
            "cfb+hmac-sha256", "snappy+gcm-write", "gcm+snappy-read");
    static final List<Integer> SIZES = List.of(256, 16384, 1048576);

    @TempDir
    Path dir;

    static Result run(String... args) {
        return CliRun.run(args);
    }

    @Test
    void shortRunGivesEveryRowTheSeedsAndAChart() throws Exception {
        Path png = dir.resolve("speed.png");
        Result r = run("speed", "--seconds", "0.2", "--json", "--chart", png.toString());
        assertEquals(0, r.code(), r.err());
        JsonNode root = new ObjectMapper().readTree(r.out());

        Set<String> engines = new HashSet<>();
        for (EngineStatus s : Engines.report().engines()) {
            if (s.available()) {
                engines.add(s.kind().id());
            }
        }
        if (TestEngines.inCi()) {
            assertEquals(Set.of("openssl-jni", "openssl-jna", "jce", "accp"), engines, "CI must measure every engine");
        }
        Set<String> columns = new HashSet<>(engines);
        columns.add("auto");
        Set<String> seen = new HashSet<>();
        Map<String, Double> best = new HashMap<>();
        Map<String, Integer> marked = new HashMap<>();
        for (JsonNode row : root.get("rows")) {
            String mode = row.get("mode").asText();
            String engine = row.get("engine").asText();
            String cell = mode + "/" + row.get("size").asInt();
            assertTrue(seen.add(mode + "/" + engine + "/" + row.get("size").asInt()),
                    "one row per mode, engine and size: " + row);
            if (row.has("not_measured")) {
                assertFalse(engine.equals("auto"), "auto runs every mode: " + row);
                assertTrue(row.get("not_measured").asText().startsWith(engine + " has no "), row.toString());
                assertFalse(row.has("mb_per_s"), row.toString());
                continue;
            }
            assertTrue(row.get("mb_per_s").asDouble() > 0, "a positive figure: " + row);
            if (engine.equals("auto")) {
                assertFalse(row.has("fastest"), row.toString());
                assertTrue(row.get("of_fastest").asDouble() > 0, row.toString());
                JsonNode resolved = row.get("resolved");
                assertTrue(resolved.size() > 0, row.toString());
                resolved.fields().forEachRemaining(f -> assertEquals(
                        Engines.auto().kindFor(Operation.fromId(f.getKey())).id(), f.getValue().asText(),
                        "auto's row names the engine auto runs " + f.getKey() + " on: " + row));
            } else {
                best.merge(cell, row.get("mb_per_s").asDouble(), Math::max);
                if (row.get("fastest").asBoolean()) {
                    marked.merge(cell, 1, Integer::sum);
                }
            }
        }
        for (JsonNode row : root.get("rows")) {
            String cell = row.get("mode").asText() + "/" + row.get("size").asInt();
            if (row.has("fastest") && row.get("fastest").asBoolean()) {
                assertEquals(best.get(cell), row.get("mb_per_s").asDouble(), "the mark is on the fastest: " + row);
            }
        }
        for (String mode : MODES) {
            for (String engine : columns) {
                for (int size : SIZES) {
                    assertTrue(seen.contains(mode + "/" + engine + "/" + size), "missing row " + mode + " " + engine + " " + size);
                }
            }
            for (int size : SIZES) {
                assertEquals(1, marked.getOrDefault(mode + "/" + size, 0), "one fastest engine in " + mode + " " + size);
            }
        }
        assertEquals(MODES.size() * columns.size() * SIZES.size(), seen.size());

        JsonNode seeds = root.get("seeds");
        assertTrue(root.get("seed_note") == null, "the seeds were all measured: " + root.get("seed_note"));
        Set<String> names = new HashSet<>();
        for (JsonNode s : seeds) {
            names.add(s.get("name").asText());
            assertTrue(s.get("measured").asDouble() > 0, s.toString());
            assertTrue(s.get("reported").asDouble() > 0, s.toString());
        }
        assertTrue(names.contains("GCM / CFB+HMAC-SHA256") && names.contains("CTR / CFB"), names.toString());
        if (engines.contains("openssl-jni")) {
            assertTrue(names.contains("AES-NI on / off, encryption (CTR stream)"), names.toString());
            assertTrue(names.contains("AES-NI on / off, decrypt+decompress read (gcm+snappy)"), names.toString());
            for (JsonNode s : seeds) {
                if (s.get("name").asText().startsWith("AES-NI on / off, encryption")) {
                    assertTrue(s.get("measured").asDouble() > 2, "hiding AES-NI must slow OpenSSL down: " + s);
                }
            }
        }
        if (engines.contains("jce")) {
            assertTrue(names.contains("AES intrinsics on / off, decryption (CTR stream, SunJCE)"), names.toString());
        }

        assertTrue(Files.size(png) > 10_000, "a PNG chart was written");
        byte[] head = Files.readAllBytes(png);
        assertEquals((byte) 0x89, head[0]);
        assertEquals('P', head[1]);
    }

    @Test
    void tableAndSvgChartForOneMode() throws Exception {
        Path svg = dir.resolve("speed.svg");
        Result r = run("speed", "--seconds", "0.03", "--mode", "ctr", "--engine", "auto", "--chart", svg.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("mode"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("ctr ") && l.contains("auto") && l.contains("(ctr=")),
                r.out());
        assertTrue(r.out().contains("Seeds reproduced"), r.out());
        String content = Files.readString(svg);
        assertTrue(content.contains("<svg"), "an SVG chart");
    }

    @Test
    void anEngineLackingTheOnlyModeIsAUsageError() {
        assumeTrue(Engines.report().status(EngineKind.ACCP).available(), "accp is not on the class path");
        Result r = run("speed", "--seconds", "0.03", "--mode", "ctr", "--engine", "accp");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("accp has no ctr"), r.err());
        assertTrue(r.out().isEmpty(), r.out());
    }

    @Test
    void badArgumentsExit2WithOneLine() {
        String png = dir.resolve("c.png").toString();
        for (String[] args : new String[][] {
            {"speed", "--seconds", "0"},
            {"speed", "--seconds", "61"},
            {"speed", "--seconds", "fast"},
            {"speed", "--mode", "rot13"},
            {"speed", "--engine", "bouncycastle"},
            {"speed", "--chart", dir.resolve("c.gif").toString()},
            {"speed", "--chart", dir.resolve("no/such/dir/c.png").toString()},
            {"speed", "--verbose"},
        }) {
            Result r = run(args);
            assertEquals(2, r.code(), String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
            assertTrue(r.out().isEmpty(), "nothing measured: " + r.out());
        }
        assertFalse(Files.exists(Path.of(png)));
    }
}
