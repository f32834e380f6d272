package io.sealpipe.cli;

import io.sealpipe.cli.SpeedSeeds.Cell;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.VectorGraphicsEncoder;
import org.knowm.xchart.style.Styler;

/** {@code sealpipe speed --chart FILE}: the table as grouped bars (XChart), PNG or SVG by the file's extension. */
final class SpeedChart {
    private SpeedChart() {}

    /** The bottom of the logarithmic axis; slower figures are drawn at it. */
    private static final double MIN_MBPS = 10.0;

    /** Whether {@code path} names a format the chart can be written in. */
    static boolean supported(Path path) {
        Path file = path.getFileName(); // null for a root such as "/"
        if (file == null) {
            return false;
        }
        String name = file.toString().toLowerCase(Locale.ROOT);
        return name.endsWith(".png") || name.endsWith(".svg");
    }

    /**
     * One group of bars per row of the table (mode and engine), one bar per call size, on a
     * logarithmic MB/s axis; written to a temporary file beside {@code path}, then renamed.
     */
    static void write(Path path, List<Cell> rows, Map<Cell, Double> mbps, String subtitle) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> groups = new ArrayList<>();
        for (Cell c : rows) {
            String g = c.mode().id + " · " + c.engine();
            if (!groups.contains(g)) {
                groups.add(g);
            }
        }
        CategoryChart chart = new CategoryChartBuilder().width(Math.max(900, 60 * groups.size() + 200)).height(700)
                .title("sealpipe speed, MB/s (one thread) — " + subtitle).xAxisTitle("").yAxisTitle("MB/s (log scale)")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        chart.getStyler().setYAxisLogarithmic(true);
        chart.getStyler().setYAxisMin(MIN_MBPS); // XChart draws log-scale bars from the axis minimum
        chart.getStyler().setXAxisLabelRotation(90);
        chart.getStyler().setAvailableSpaceFill(0.8);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setPlotBackgroundColor(Color.WHITE);
        chart.getStyler().setLegendBorderColor(Color.LIGHT_GRAY);
        chart.getStyler().setSeriesColors(new Color[] {new Color(0x9ecae1), new Color(0x4292c6), new Color(0x08519c)});
        for (int size : SpeedWorkloads.SIZES) {
            List<Double> values = new ArrayList<>();
            for (String g : groups) {
                Double v = null;
                for (Cell c : rows) {
                    if (c.size() == size && g.equals(c.mode().id + " · " + c.engine())) {
                        v = mbps.get(c);
                    }
                }
                values.add(v == null ? MIN_MBPS : Math.max(v, MIN_MBPS));
            }
            chart.addSeries(SpeedCommand.sizeLabel(size), groups, values);
        }
        Path target = path.toAbsolutePath();
        Path temp = Files.createTempFile(target.getParent(), "." + target.getFileName() + ".", ".tmp");
        try {
            try (OutputStream out = Files.newOutputStream(temp)) {
                if (target.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".svg")) {
                    VectorGraphicsEncoder.saveVectorGraphic(chart, out, VectorGraphicsEncoder.VectorGraphicsFormat.SVG);
                } else {
                    BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
                }
            }
            Files.move(temp, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}
