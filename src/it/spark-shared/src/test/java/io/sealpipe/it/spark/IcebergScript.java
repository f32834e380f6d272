package io.sealpipe.it.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.iceberg.Table;
import org.apache.iceberg.actions.DeleteOrphanFiles;
import org.apache.iceberg.spark.Spark3Util;
import org.apache.iceberg.spark.actions.SparkActions;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * One script of Spark SQL statements on an Iceberg table, run against a catalog of the session,
 * every result kept as rows, so that the runs on a plain warehouse and on a sealed one can be
 * compared whole. Only what does not vary from run to run is kept: rows, counts, record counts,
 * operations and content types, never paths, snapshot ids, times or byte counts.
 *
 * <p>The table (format-version 2, partitioned by {@code part} into three partitions, 300 rows and
 * then some) is written in {@code format} (Parquet or ORC: its data and its delete files):
 *
 * <ol>
 *   <li>created copy-on-write ({@code write.delete.mode}, {@code write.update.mode},
 *       {@code write.merge.mode}), two inserts, then {@code MERGE INTO}, {@code UPDATE} and
 *       {@code DELETE}, each rewriting the data files they touch;
 *   <li>time travel to the first insert ({@code VERSION AS OF}), {@code rewrite_data_files},
 *       {@code expire_snapshots} down to the last snapshot, and {@code remove_orphan_files}'s
 *       action ({@code DeleteOrphanFilesSparkAction}: the procedure refuses an {@code older_than}
 *       within the last 24 hours) of a file written into the table's data directory through the
 *       table's own {@code FileIO};
 *   <li>switched to merge-on-read: {@code MERGE INTO}, {@code UPDATE} and {@code DELETE} again,
 *       now writing position delete files beside the data;
 *   <li>a read with a filter (partition and data column) and a projection, the metadata tables
 *       {@code .files} and {@code .snapshots}, time travel to the snapshot before the
 *       merge-on-read statements, and {@code compute_table_stats} (a Puffin statistics file).
 * </ol>
 *
 * <p>So the warehouse ends with every kind of file a table has: data files, delete files,
 * manifests, manifest lists, {@code metadata.json} files and a statistics file (and the Hadoop
 * catalog's {@code version-hint.text}).
 *
 * <p>The script knows only the catalog's name: whatever {@code FileIO} the catalog is configured
 * with ({@code io-impl}: Iceberg's {@code HadoopFileIO} on a sealed Hadoop scheme here; a
 * {@code SealedFileIO} over another {@code FileIO} next) is what every statement goes through,
 * the orphan file too.
 */
final class IcebergScript {
    /** One statement's result: what it was and its rows, each as {@link Row#toString()}. */
    record Result(String statement, List<String> rows) {
        @Override
        public String toString() {
            return statement + " -> " + rows;
        }
    }

    /** Later than any snapshot of the run: {@code older_than} of expire_snapshots. */
    private static final String FUTURE = "TIMESTAMP '2999-01-01 00:00:00'";

    private final SparkSession spark;
    private final String catalog;
    private final boolean prefixListing;
    private final List<Result> results = new ArrayList<>();

    private IcebergScript(SparkSession spark, String catalog, boolean prefixListing) {
        this.spark = spark;
        this.catalog = catalog;
        this.prefixListing = prefixListing;
    }

    /**
     * Runs the script on table {@code db.<name>} of Spark catalog {@code catalog}, its files in
     * {@code format} ("parquet" or "orc"), and returns every statement's result in order.
     * {@code remove_orphan_files} lists the table's files with Hadoop's {@code FileSystem} (its
     * default), or with {@code prefixListing} through the table's {@code FileIO}
     * ({@code SupportsPrefixOperations.listPrefix}: {@code HadoopFileIO}'s lists through the same
     * file system; a {@code FileIO} of a scheme Hadoop has no file system for needs it).
     */
    static List<Result> run(SparkSession spark, String catalog, String name, String format, boolean prefixListing)
            throws IOException {
        return new IcebergScript(spark, catalog, prefixListing).script(name, format);
    }

    private List<Result> script(String name, String format) throws IOException {
        String t = catalog + ".db." + name;
        String rows = "SELECT id, CAST(id % 3 AS INT) AS part, concat('n', id) AS name, id * 0.5 AS amount FROM range";
        sql("CREATE NAMESPACE IF NOT EXISTS " + catalog + ".db");
        sql("CREATE TABLE " + t + " (id BIGINT, part INT, name STRING, amount DOUBLE) USING iceberg PARTITIONED BY (part)"
                + " TBLPROPERTIES ('format-version' = '2', 'write.format.default' = '" + format + "',"
                + " 'write.delete.format.default' = '" + format + "', " + modes("copy-on-write") + ")");
        sql("INSERT INTO " + t + " " + rows + "(0, 200, 1, 2)");
        long first = table(t).currentSnapshot().snapshotId();
        sql("INSERT INTO " + t + " " + rows + "(200, 300, 1, 2)");

        // 1. Copy-on-write: each statement rewrites the data files it touches.
        sql("MERGE INTO " + t + " t USING (" + rows + "(250, 350, 1, 2)) s ON t.id = s.id"
                + " WHEN MATCHED THEN UPDATE SET t.amount = s.amount + 1000, t.name = 'merged'"
                + " WHEN NOT MATCHED THEN INSERT *");
        sql("UPDATE " + t + " SET name = 'updated', amount = amount - 1 WHERE id % 10 = 0");
        sql("DELETE FROM " + t + " WHERE id % 7 = 0");
        query("all rows after copy-on-write", "SELECT * FROM " + t + " ORDER BY id");

        // 2. Time travel and table maintenance.
        query("time travel to the first insert", "SELECT * FROM " + t + " VERSION AS OF " + first + " ORDER BY id");
        call("rewrite_data_files", "CALL " + catalog + ".system.rewrite_data_files(table => '" + t + "',"
                + " options => map('rewrite-all', 'true'))");
        query("all rows after rewrite_data_files", "SELECT * FROM " + t + " ORDER BY id");
        call("expire_snapshots", "CALL " + catalog + ".system.expire_snapshots(table => '" + t + "',"
                + " older_than => " + FUTURE + ", retain_last => 1)");
        query("snapshots after expire_snapshots", "SELECT count(*) FROM " + t + ".snapshots");
        Table table = table(t);
        String orphan = table.location() + "/data/part=1/orphan-0." + format;
        try (OutputStream out = table.io().newOutputFile(orphan).create()) {
            out.write("no table refers to this file".getBytes(StandardCharsets.UTF_8));
        }
        // The procedure (remove_orphan_files) refuses an older_than within the last 24 hours, so
        // that a file a running writer has yet to commit is never taken for an orphan; its action
        // does what it does (a listing through Hadoop's FileSystem, compared with the files the
        // table's metadata names) with any time.
        DeleteOrphanFiles.Result removed = SparkActions.get(spark).deleteOrphanFiles(table)
                .olderThan(System.currentTimeMillis() + TimeUnit.DAYS.toMillis(1))
                .usePrefixListing(prefixListing)
                .execute();
        List<String> names = new ArrayList<>();
        for (String location : removed.orphanFileLocations()) {
            names.add(location.substring(location.lastIndexOf('/') + 1));
        }
        names.sort(null);
        results.add(new Result("remove_orphan_files (its action): the names of the files removed", names));
        long beforeMergeOnRead = table(t).currentSnapshot().snapshotId();

        // 3. Merge-on-read: position delete files beside the data.
        sql("ALTER TABLE " + t + " SET TBLPROPERTIES (" + modes("merge-on-read") + ")");
        sql("MERGE INTO " + t + " t USING (" + rows + "(20, 60, 1, 2)) s ON t.id = s.id"
                + " WHEN MATCHED AND t.id % 2 = 0 THEN DELETE"
                + " WHEN MATCHED THEN UPDATE SET t.amount = -s.amount"
                + " WHEN NOT MATCHED THEN INSERT *");
        sql("UPDATE " + t + " SET name = 'updated on read' WHERE id % 11 = 0");
        sql("DELETE FROM " + t + " WHERE id % 13 = 0");

        // 4. Reads, metadata tables, statistics.
        query("all rows after merge-on-read", "SELECT * FROM " + t + " ORDER BY id");
        query("filtered and projected", "SELECT id, amount FROM " + t + " WHERE part = 1 AND id BETWEEN 100 AND 260 ORDER BY id");
        query("count and sum", "SELECT count(*), sum(amount) FROM " + t);
        query(".files: content, format, partition, files, records",
                "SELECT content, file_format, partition.part, count(*), sum(record_count) FROM " + t + ".files"
                        + " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3");
        query(".snapshots: operations and totals",
                "SELECT operation, summary['total-records'], summary['total-data-files'], summary['total-delete-files'],"
                        + " summary['total-position-deletes'] FROM " + t + ".snapshots ORDER BY committed_at");
        query("time travel to the snapshot before merge-on-read",
                "SELECT * FROM " + t + " VERSION AS OF " + beforeMergeOnRead + " ORDER BY id");
        Dataset<Row> stats = spark.sql("CALL " + catalog + ".system.compute_table_stats(table => '" + t + "')");
        results.add(new Result("compute_table_stats: statistics files written", List.of(Long.toString(stats.count()))));
        query("rows after compute_table_stats", "SELECT count(*), sum(amount) FROM " + t);
        return results;
    }

    private static String modes(String mode) {
        return "'write.delete.mode' = '" + mode + "', 'write.update.mode' = '" + mode + "',"
                + " 'write.merge.mode' = '" + mode + "'";
    }

    private Table table(String name) {
        try {
            Table table = Spark3Util.loadIcebergTable(spark, name);
            table.refresh();
            return table;
        } catch (Exception e) {
            throw new IllegalStateException("cannot load " + name, e);
        }
    }

    /** A statement whose result (if any) is kept, named by its text without the catalog's name. */
    private void sql(String statement) {
        results.add(new Result(statement.replace(catalog + ".", ""), render(spark.sql(statement))));
    }

    /** A query whose rows are kept, named by {@code what} (its text has snapshot ids, which differ from run to run). */
    private void query(String what, String statement) {
        results.add(new Result(what, render(spark.sql(statement))));
    }

    /** A procedure's result, its {@code *_count} columns but those of bytes (which depend on compression). */
    private void call(String what, String statement) {
        Dataset<Row> result = spark.sql(statement);
        String[] counts = Arrays.stream(result.columns()).filter(c -> c.endsWith("_count") && !c.contains("bytes"))
                .toArray(String[]::new);
        results.add(new Result(what + " " + Arrays.toString(counts), render(result.selectExpr(counts))));
    }

    private static List<String> render(Dataset<Row> rows) {
        List<String> rendered = new ArrayList<>();
        for (Row row : rows.collectAsList()) {
            rendered.add(row.toString());
        }
        return rendered;
    }
}
