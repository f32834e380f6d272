package io.sealpipe.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Prints JMH JSON results ({@code -rf json}) of the throughput benchmarks in this package as a
 * Markdown table of MB/s: one row per benchmark method and parameter set other than
 * {@code size}, one column per size. A cell is {@code score ± error}, the JMH score (ops/s)
 * and its 99.9% confidence half-width, each &times; size / 10<sup>6</sup>. Given several files,
 * it prints the tables of each under its name. Results of a run with {@code -prof gc} are followed
 * by a second table of the same shape: {@code gc.alloc.rate.norm}, bytes allocated per operation.
 *
 * <pre>
 * java -cp CLASSPATH io.sealpipe.bench.JmhToMbps [target/jmh-result.json ...]
 * mvn -q -Pjmh exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.sealpipe.bench.JmhToMbps \
 *     -Dexec.args=target/jmh-result.json
 * </pre>
 */
public final class JmhToMbps {
    private JmhToMbps() {}

    /**
     * One result: its row ("Class.method | value | ..." for the parameters but size, named in
     * {@code params}), size in bytes, MB/s and error, and bytes allocated per operation (NaN
     * unless run with {@code -prof gc}).
     */
    record Row(String key, List<String> params, long size, double mbps, double error, double allocPerOp) {}

    public static void main(String[] args) throws IOException {
        List<Path> files = new ArrayList<>();
        for (String arg : args.length == 0 ? new String[] {"target/jmh-result.json"} : args) {
            files.add(Path.of(arg));
        }
        // One set of tables per file: two runs of the same benchmark must not overwrite each other.
        for (Path file : files) {
            if (!Files.isRegularFile(file)) {
                System.err.println("JmhToMbps: no JMH result at " + file.toAbsolutePath()
                        + " (run JMH with -rf json -rff " + file + ")");
                System.exit(2);
            }
            if (files.size() > 1) {
                System.out.println((file == files.get(0) ? "" : System.lineSeparator()) + "**" + file + "**"
                        + System.lineSeparator());
            }
            print(read(new ObjectMapper().readTree(file.toFile())), System.out);
        }
    }

    /** The rows of one JMH JSON array; results without a {@code size} parameter are skipped. */
    static List<Row> read(JsonNode results) {
        List<Row> rows = new ArrayList<>();
        for (JsonNode result : results) {
            JsonNode params = result.path("params");
            if (!params.has("size")) {
                continue;
            }
            long size = Long.parseLong(params.get("size").asText());
            String method = result.get("benchmark").asText();
            // "io.sealpipe.bench.EngineBenchmark.gcmSeal" -> "EngineBenchmark.gcmSeal"
            StringBuilder key = new StringBuilder(
                    method.substring(method.lastIndexOf('.', method.lastIndexOf('.') - 1) + 1));
            List<String> names = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = params.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> p = it.next();
                if (!p.getKey().equals("size")) {
                    names.add(p.getKey());
                    key.append(" | ").append(p.getValue().asText());
                }
            }
            JsonNode metric = result.get("primaryMetric");
            double perSecond = opsPerSecond(metric.get("scoreUnit").asText());
            double scale = perSecond * size / 1e6;
            double error = metric.get("scoreError").asDouble();
            JsonNode alloc = result.path("secondaryMetrics").path("gc.alloc.rate.norm");
            rows.add(new Row(key.toString(), names, size,
                    metric.get("score").asDouble() * scale, Double.isNaN(error) ? Double.NaN : error * scale,
                    alloc.has("score") ? alloc.get("score").asDouble() : Double.NaN));
        }
        return rows;
    }

    /** Factor from the score unit to ops/s; only throughput units make sense here. */
    private static double opsPerSecond(String unit) {
        return switch (unit) {
            case "ops/s" -> 1;
            case "ops/ms" -> 1e3;
            case "ops/us" -> 1e6;
            case "ops/ns" -> 1e9;
            case "ops/min" -> 1.0 / 60;
            default -> throw new IllegalArgumentException(
                    "score unit " + unit + " is not a throughput: run the benchmarks with -bm thrpt");
        };
    }

    /** One table per set of parameter names (EngineBenchmark's engine, JceWarmupBenchmark's impl). */
    static void print(List<Row> rows, PrintStream out) {
        Map<List<String>, List<Row>> groups = new LinkedHashMap<>();
        for (Row r : rows) {
            groups.computeIfAbsent(r.params(), k -> new ArrayList<>()).add(r);
        }
        boolean first = true;
        for (Map.Entry<List<String>, List<Row>> group : groups.entrySet()) {
            if (!first) {
                out.println();
            }
            first = false;
            printTable(group.getKey(), group.getValue(), false, out);
            if (group.getValue().stream().anyMatch(r -> !Double.isNaN(r.allocPerOp()))) {
                out.println();
                printTable(group.getKey(), group.getValue(), true, out);
            }
        }
    }

    /** The MB/s table, or with {@code alloc} the table of gc.alloc.rate.norm (B/op). */
    private static void printTable(List<String> params, List<Row> rows, boolean alloc, PrintStream out) {
        TreeSet<Long> sizes = new TreeSet<>();
        Map<String, Map<Long, Row>> table = new LinkedHashMap<>();
        for (Row r : rows) {
            sizes.add(r.size());
            if (table.computeIfAbsent(r.key(), k -> new LinkedHashMap<>()).put(r.size(), r) != null) {
                throw new IllegalArgumentException("two results for " + r.key() + " at size " + r.size());
            }
        }
        StringBuilder header = new StringBuilder("| benchmark |");
        StringBuilder rule = new StringBuilder("| --- |");
        for (String name : params) {
            header.append(' ').append(name).append(" |");
            rule.append(" --- |");
        }
        for (long size : sizes) {
            header.append(' ').append(sizeName(size)).append(alloc ? " (B/op) |" : " (MB/s) |");
            rule.append(" ---: |");
        }
        out.println(header);
        out.println(rule);
        for (Map.Entry<String, Map<Long, Row>> e : table.entrySet()) {
            StringBuilder line = new StringBuilder("| ").append(e.getKey()).append(" |");
            for (long size : sizes) {
                Row r = e.getValue().get(size);
                line.append(' ').append(r == null ? "" : alloc ? bytes(r.allocPerOp()) : cell(r)).append(" |");
            }
            out.println(line);
        }
    }

    private static String cell(Row r) {
        String score = format(r.mbps());
        return Double.isNaN(r.error()) ? score : score + " ± " + format(r.error());
    }

    /** Bytes per operation: two decimals below 10 (JMH's noise floor is around 0.01-2 B/op). */
    private static String bytes(double perOp) {
        if (Double.isNaN(perOp)) {
            return "";
        }
        return perOp < 10 ? String.format(Locale.ROOT, "%.2f", perOp) : String.format(Locale.ROOT, "%.0f", perOp);
    }

    private static String format(double mbps) {
        return mbps >= 100 ? String.format(Locale.ROOT, "%.0f", mbps) : String.format(Locale.ROOT, "%.1f", mbps);
    }

    private static String sizeName(long size) {
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return (size >> 20) + " MiB";
        }
        if (size >= 1 << 10 && size % (1 << 10) == 0) {
            return (size >> 10) + " KiB";
        }
        return size + " B";
    }
}
