package io.sealpipe.it.s3a;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.fs.statistics.IOStatisticsSnapshot;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;
import org.apache.hadoop.fs.statistics.StoreStatisticNames;
import org.apache.hadoop.fs.statistics.StreamStatisticNames;

/**
 * What one S3A file system instance sent to S3 between two points, from its own
 * {@code IOStatistics} (a stream's counters join the file system's when it closes): requests by
 * kind, and the bytes it fetched.
 */
record Requests(long head, long get, long list, long put, long bytesFetched) {
    /** S3A's counters now, to subtract from later ones. */
    static IOStatisticsSnapshot snapshot(FileSystem s3a) {
        if (!(s3a instanceof S3AFileSystem)) {
            throw new IllegalArgumentException(s3a + " is not S3A");
        }
        return IOStatisticsSupport.snapshotIOStatistics(((S3AFileSystem) s3a).getIOStatistics());
    }

    /** What was sent since {@code before}. */
    static Requests since(FileSystem s3a, IOStatisticsSnapshot before) {
        Map<String, Long> now = snapshot(s3a).counters();
        Map<String, Long> then = before.counters();
        return new Requests(
                delta(now, then, StoreStatisticNames.OBJECT_METADATA_REQUESTS),
                delta(now, then, StreamStatisticNames.STREAM_READ_OPENED),
                delta(now, then, StoreStatisticNames.OBJECT_LIST_REQUEST)
                        + delta(now, then, StoreStatisticNames.OBJECT_CONTINUE_LIST_REQUEST),
                delta(now, then, StoreStatisticNames.OBJECT_PUT_REQUEST)
                        + delta(now, then, StoreStatisticNames.MULTIPART_UPLOAD_PART_PUT),
                // Bytes that came over the connection: those read, those read to skip forward and
                // those drained when a stream closed (an aborted request's rest is not counted).
                delta(now, then, StreamStatisticNames.STREAM_READ_TOTAL_BYTES));
    }

    private static long delta(Map<String, Long> now, Map<String, Long> then, String key) {
        return now.getOrDefault(key, 0L) - then.getOrDefault(key, 0L);
    }

    /** The counts as a map, for reports. */
    Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("HEAD", head);
        m.put("GET", get);
        m.put("LIST", list);
        m.put("PUT", put);
        m.put("bytes", bytesFetched);
        return m;
    }

    @Override
    public String toString() {
        return "HEAD " + head + ", GET " + get + ", LIST " + list + ", PUT " + put + ", " + bytesFetched + " bytes fetched";
    }
}
