package io.sealpipe.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.sealpipe.cli.SpeedSeeds.Cell;
import io.sealpipe.cli.SpeedSeeds.Seed;
import io.sealpipe.cli.SpeedWorkloads.Mode;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineReport;
import io.sealpipe.engine.EngineStatus;
import io.sealpipe.engine.EngineUnavailableException;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Operation;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sealpipe speed}: a table of MB/s like {@code openssl speed}'s, for every mode and
 * engine at 256 B, 16 KiB and 1 MiB per call, with a row for {@code auto} (and the engine it
 * runs each operation on) and a mark on the fastest engine of each cell; below it the founding
 * measurements reproduced on this machine ({@link SpeedSeeds}). Timed loops in this JVM (warm-up, then
 * several runs, the median reported), about a minute in all; the JMH suites in src/jmh are the
 * careful measurement.
 */
@Command(name = "speed", mixinStandardHelpOptions = true,
        description = {"Measure MB/s of every mode and engine at 256 B, 16 KiB and 1 MiB per call (one thread),"
                + " auto beside them, and reproduce the founding ratios (GCM vs CFB+HMAC-SHA256, CTR vs CFB, AES-NI on vs off).",
            "Quick loops, not a replacement for the JMH suites (docs/PERFORMANCE.md)."})
final class SpeedCommand implements Callable<Integer> {
    static final int REPEATS = 3;

    /** The column of {@link Engines#auto()}. */
    static final String AUTO = "auto";

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "0.25",
            description = "Measuring time per cell, after half as much warm-up (default: ${DEFAULT-VALUE}; 0.01..60)."
                    + " The default run takes about a minute.")
    double seconds;

    @Option(names = "--engine", paramLabel = "E", defaultValue = "all",
            description = "all (default: every engine available here, then auto), auto, or one engine: ${COMPLETION-CANDIDATES}.",
            completionCandidates = EngineNames.class)
    String engine;

    @Option(names = "--mode", paramLabel = "M", split = ",",
            description = "Only these rows: gcm-stream, ctr-stream, gcm, ctr, cfb, hmac-sha256, cfb+hmac-sha256,"
                    + " snappy+gcm-write, gcm+snappy-read (default: all, and the AES-NI on/off seeds).")
    List<String> modeNames;

    @Option(names = "--json", description = "Print one JSON object (rows and seeds) instead of the table.")
    boolean json;

    @Option(names = "--chart", paramLabel = "FILE", description = "Also draw the table as grouped bars, FILE.png or FILE.svg.")
    Path chart;

    @Spec
    CommandSpec spec;

    private UsageException bad(String message) {
        return new UsageException(spec.commandLine(), message);
    }

    @Override
    public Integer call() throws IOException {
        if (!(seconds >= 0.01 && seconds <= 60)) {
            throw bad("--seconds must be 0.01..60");
        }
        List<Mode> modes = modes();
        if (chart != null && !SpeedChart.supported(chart)) {
            throw bad("--chart: the file name must end in .png or .svg");
        }
        if (chart != null && chart.toAbsolutePath().getParent() != null
                && !Files.isDirectory(chart.toAbsolutePath().getParent())) {
            throw bad("--chart: the folder it names does not exist");
        }
        EngineReport report = Engines.report();
        List<String> engines = engines(report);
        Map<Mode, Map<Operation, EngineKind>> resolved = resolved(modes, engines);

        SpeedSeeds.Timing timing = new SpeedSeeds.Timing((long) (seconds / 2 * 1e9), (long) (seconds / REPEATS * 1e9),
                REPEATS);
        List<Cell> cells = new ArrayList<>();
        for (Mode m : modes) {
            for (String e : engines) {
                for (int size : SpeedWorkloads.SIZES) {
                    cells.add(new Cell(m, e, size));
                }
            }
        }
        Map<Cell, Double> mbps = new LinkedHashMap<>();
        List<Cell> measured = cells.stream().filter(c -> lacking(c) == null).toList();
        if (measured.isEmpty()) {
            throw bad("nothing to measure: " + lacking(cells.get(0)) + " (choose another --engine, or all)");
        }
        Progress progress = new Progress(spec.commandLine().getErr(), measured.size());
        progress.show("warming up (the JIT compiles every workload before any is measured)");
        warmUp(measured);
        for (Cell c : measured) {
            progress.show(c);
            mbps.put(c, measure(c.mode(), c.engine(), c.size(), timing));
        }
        progress.show("reproducing the seeds" + (modeNames == null ? " (a second JVM without AES-NI)" : ""));
        List<EngineKind> kinds = engines.stream().filter(e -> !e.equals(AUTO)).map(EngineKind::fromId).toList();
        String reference = kinds.stream().filter(EngineKind::isOpenSsl).findFirst().or(() -> kinds.stream().findFirst())
                .map(EngineKind::id).orElse(AUTO);
        List<Seed> seeds;
        String seedNote = null;
        try {
            seeds = SpeedSeeds.reproduce(mbps, kinds, reference, timing, (m, e, size) -> measure(m, e, size, timing),
                    modeNames == null);
        } catch (IOException e) {
            seedNote = "the AES-NI on/off seeds were not measured: " + e.getMessage();
            seeds = SpeedSeeds.reproduce(mbps, kinds, reference, timing, null, false);
        }
        progress.done();

        Table table = new Table(cells, mbps, resolved);
        String machine = machine(report);
        if (json) {
            printJson(table, seeds, seedNote, machine, report);
        } else {
            printTable(table, seeds, seedNote, machine, report);
        }
        if (chart != null) {
            SpeedChart.write(chart, measured, mbps, machine);
            spec.commandLine().getErr().println("sealpipe: chart written to " + chart);
        }
        return Main.OK;
    }

    private List<Mode> modes() {
        if (modeNames == null) {
            return List.of(Mode.TABLE);
        }
        List<Mode> modes = new ArrayList<>();
        for (String name : modeNames) {
            Mode m;
            try {
                m = Mode.fromId(name);
            } catch (IllegalArgumentException e) {
                m = null;
            }
            if (m == null || m == Mode.CTR_STREAM_READ) {
                throw bad("--mode takes gcm-stream, ctr-stream, gcm, ctr, cfb, hmac-sha256,"
                        + " cfb+hmac-sha256, snappy+gcm-write or gcm+snappy-read");
            }
            if (!modes.contains(m)) {
                modes.add(m);
            }
        }
        return modes;
    }

    /**
     * The columns: the engines available here, then {@code auto} (measured last in each mode,
     * so that the engines it warms up in the background are ready); or the one named.
     */
    private List<String> engines(EngineReport report) {
        String name = engine.trim().toLowerCase(Locale.ROOT);
        if (name.equals("all")) {
            List<String> ids = new ArrayList<>();
            for (EngineStatus s : report.engines()) {
                if (s.available()) {
                    ids.add(s.kind().id());
                }
            }
            if (ids.isEmpty()) {
                throw new EngineUnavailableException("no engine can run here: " + report.describe().strip());
            }
            Engines.auto(); // throws EngineUnavailableException (exit 1) with the reason
            ids.add(AUTO);
            return ids;
        }
        if (!name.equals(AUTO)) {
            try {
                EngineKind.fromId(name);
            } catch (IllegalArgumentException e) {
                throw bad("--engine takes all, auto or one of " + String.join(", ", new EngineNames()));
            }
        }
        Engines.forName(name); // throws EngineUnavailableException (exit 1) with the reason
        return List.of(name);
    }

    /** For the auto column: the engine auto runs each operation of each mode on. */
    private static Map<Mode, Map<Operation, EngineKind>> resolved(List<Mode> modes, List<String> engines) {
        Map<Mode, Map<Operation, EngineKind>> resolved = new EnumMap<>(Mode.class);
        if (engines.contains(AUTO)) {
            CryptoEngine auto = Engines.auto();
            for (Mode m : modes) {
                Map<Operation, EngineKind> ops = new EnumMap<>(Operation.class);
                for (Operation op : m.operations) {
                    ops.put(op, auto.kindFor(op));
                }
                resolved.put(m, ops);
            }
        }
        return resolved;
    }

    /** Why a cell is not measured (its engine lacks an operation of the mode), or null. */
    private static String lacking(Cell c) {
        return c.engine().equals(AUTO) ? null : c.mode().lackedBy(EngineKind.fromId(c.engine()));
    }

    /**
     * Runs every workload briefly at 256 B and 16 KiB before anything is measured, so that the
     * first cells do not measure code the JIT has not compiled yet (SunJCE needs thousands of
     * calls before its AES intrinsics are reached). This also starts auto's background warm-ups.
     */
    private void warmUp(List<Cell> cells) throws IOException {
        long nanos = (long) (Math.max(0.02, seconds / 5) * 1e9);
        SpeedSeeds.Timing brief = new SpeedSeeds.Timing(nanos / 2, nanos / 2, 1);
        for (Cell c : cells) {
            if (c.size() != SpeedWorkloads.SIZES[SpeedWorkloads.SIZES.length - 1]) {
                measure(c.mode(), c.engine(), c.size(), brief);
            }
        }
    }

    private static double measure(Mode mode, String engine, int size, SpeedSeeds.Timing timing) throws IOException {
        try (SpeedWorkloads.Op op = SpeedWorkloads.create(mode, Engines.forName(engine), size)) {
            return SpeedWorkloads.measure(op, size, timing.warmupNanos(), timing.measureNanos(), timing.repeats());
        } catch (GeneralSecurityException e) {
            throw new IOException(mode.id + " on " + engine + " failed: " + e.getMessage(), e);
        }
    }

    /** The engine names {@code --engine} takes besides all and auto, for its help. */
    static final class EngineNames extends ArrayList<String> {
        private static final long serialVersionUID = 1L;

        EngineNames() {
            super(Arrays.stream(EngineKind.values()).map(EngineKind::id).toList());
        }
    }

    /**
     * The figures with what the table shows beside them: the fastest engine of each mode and
     * size, and for auto the engines it resolved to.
     */
    private record Table(List<Cell> cells, Map<Cell, Double> mbps, Map<Mode, Map<Operation, EngineKind>> resolved) {
        /** The best figure among the engines (auto not counted) for a mode and size, or null. */
        Double best(Mode mode, int size) {
            Double best = null;
            for (Cell c : cells) {
                Double v = mbps.get(c);
                if (c.mode() == mode && c.size() == size && !c.engine().equals(AUTO) && v != null
                        && (best == null || v > best)) {
                    best = v;
                }
            }
            return best;
        }

        boolean fastest(Cell c) {
            Double v = mbps.get(c);
            return !c.engine().equals(AUTO) && v != null && v.equals(best(c.mode(), c.size()));
        }

        /** {@code ctr=jce} or {@code gcm-seal=accp, ...}: where auto ran the mode's operations. */
        String resolvedText(Mode m) {
            StringBuilder b = new StringBuilder();
            resolved.get(m).forEach((op, kind) -> b.append(b.length() == 0 ? "" : ", ").append(op.id()).append('=')
                    .append(kind.id()));
            return b.toString();
        }
    }

    static String sizeLabel(int size) {
        return size >= 1 << 20 ? (size >> 20) + " MiB" : size >= 1 << 10 ? (size >> 10) + " KiB" : size + " B";
    }

    private static String machine(EngineReport report) {
        return report.opensslVersion().orElse("no OpenSSL") + ", " + report.cpu().aesName() + " "
                + (report.cpu().aesni() ? "yes" : "no")
                + ", " + Runtime.getRuntime().availableProcessors() + " CPUs, Java " + System.getProperty("java.version");
    }

    private void printTable(Table table, List<Seed> seeds, String seedNote, String machine, EngineReport report) {
        List<Cell> cells = table.cells();
        PrintWriter out = spec.commandLine().getOut();
        out.printf(Locale.ROOT, "sealpipe speed: MB/s (10^6 bytes/s), one thread, median of %d runs of %.0f ms after %.0f ms"
                + " of warm-up%n", REPEATS, seconds / REPEATS * 1000, seconds / 2 * 1000);
        out.println(machine + "; quick loops, not a replacement for JMH (docs/PERFORMANCE.md)");
        for (EngineStatus s : report.engines()) {
            if (!s.available() && engine.equalsIgnoreCase("all")) {
                out.println("not measured: " + s.kind().id() + " (" + s.reason() + ")");
            }
        }
        out.println();
        out.printf(Locale.ROOT, "%-18s %-12s", "mode", "engine");
        for (int size : SpeedWorkloads.SIZES) {
            out.printf(Locale.ROOT, " %10s", sizeLabel(size));
        }
        out.println();
        for (int i = 0; i < cells.size(); i += SpeedWorkloads.SIZES.length) {
            Cell first = cells.get(i);
            out.printf(Locale.ROOT, "%-18s %-12s", first.mode().id, first.engine());
            for (int j = 0; j < SpeedWorkloads.SIZES.length; j++) {
                Cell c = cells.get(i + j);
                Double v = table.mbps().get(c);
                out.print(v == null ? String.format(Locale.ROOT, " %10s ", "-")
                        : String.format(Locale.ROOT, " %10.1f%s", v, table.fastest(c) ? "*" : " "));
            }
            if (first.engine().equals(AUTO)) {
                out.print(" (" + table.resolvedText(first.mode()) + ")");
            } else if (lacking(first) != null) {
                out.print(" (" + lacking(first) + ")");
            }
            out.println();
        }
        out.println("* the fastest engine for that mode and size; auto's row names the engine it ran each operation on;"
                + " - not measured");
        out.println();
        out.println("Seeds reproduced (measured here vs reported):");
        for (Seed s : seeds) {
            out.printf(Locale.ROOT, "  %-58s %7.1fx  vs %5.1fx  %s%n      (%s)%n", s.name(), s.measured(), s.reported(),
                    s.source(), s.how());
        }
        if (seedNote != null) {
            out.println("  " + seedNote);
        }
        out.flush();
    }

    private void printJson(Table table, List<Seed> seeds, String seedNote, String machine, EngineReport report)
            throws IOException {
        Map<String, Object> root = new LinkedHashMap<>();
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Cell c : table.cells()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("mode", c.mode().id);
            row.put("engine", c.engine());
            row.put("size", c.size());
            Double v = table.mbps().get(c);
            if (v == null) {
                row.put("not_measured", lacking(c));
            } else {
                row.put("mb_per_s", Math.round(v * 10) / 10.0);
            }
            if (c.engine().equals(AUTO)) {
                Map<String, String> ops = new LinkedHashMap<>();
                table.resolved().get(c.mode()).forEach((op, kind) -> ops.put(op.id(), kind.id()));
                row.put("resolved", ops);
                Double best = table.best(c.mode(), c.size());
                if (best != null && v != null) {
                    row.put("of_fastest", Math.round(v / best * 100) / 100.0);
                }
            } else if (v != null) {
                row.put("fastest", table.fastest(c));
            }
            rows.add(row);
        }
        root.put("rows", rows);
        List<Map<String, Object>> seedList = new ArrayList<>();
        for (Seed s : seeds) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", s.name());
            m.put("measured", Math.round(s.measured() * 100) / 100.0);
            m.put("reported", s.reported());
            m.put("source", s.source());
            m.put("how", s.how());
            seedList.add(m);
        }
        root.put("seeds", seedList);
        if (seedNote != null) {
            root.put("seed_note", seedNote);
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("seconds", seconds);
        settings.put("repeats", REPEATS);
        settings.put("threads", 1);
        root.put("settings", settings);
        root.put("machine", machine);
        root.put("engine_chosen_by_auto", report.chosen().map(EngineKind::id).orElse(null));
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        spec.commandLine().getOut().println(mapper.writeValueAsString(root));
        spec.commandLine().getOut().flush();
    }

    /** The progress line on a terminal's standard error; silent when that is not a terminal. */
    private static final class Progress {
        private final PrintWriter err;
        private final int total;
        private final boolean on = System.console() != null;
        private int done;

        Progress(PrintWriter err, int total) {
            this.err = err;
            this.total = total;
        }

        void show(Cell c) {
            done++;
            show(String.format(Locale.ROOT, "[%d/%d] %s on %s, %s per call", done, total, c.mode().id, c.engine(),
                    sizeLabel(c.size())));
        }

        void show(String text) {
            if (on) {
                err.print("\r\033[K" + text);
                err.flush();
            }
        }

        void done() {
            if (on) {
                err.print("\r\033[K");
                err.flush();
            }
        }
    }
}
