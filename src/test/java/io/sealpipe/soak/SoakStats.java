package io.sealpipe.soak;

import io.sealpipe.StreamAuthenticationException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the soak counted, by kind of operation: operations, plaintext bytes checked against the
 * known plaintext, wrong bytes, reads that failed because the soak itself closed the object
 * (expected), and everything else thrown (unexpected), grouped by a signature with the first
 * occurrence kept whole for the report. Thread-safe.
 */
final class SoakStats {
    /** The kinds of operation, as named in the summary. */
    enum Kind {
        GCM_READ("gcm-read"),
        CTR_READ("ctr-read"),
        GCM_SEEK("gcm-seek"),
        CTR_SEEK("ctr-seek"),
        GCM_POSITIONED("gcm-positioned"),
        CTR_POSITIONED("ctr-positioned"),
        GCM_WRITE("gcm-write"),
        GCM_ABORT("gcm-abort"),
        CTR_WRITE("ctr-write"),
        GCM_CLOSE_SHARED("gcm-close-shared"),
        CTR_CLOSE_SHARED("ctr-close-shared"),
        CLOSE_OTHERS_READ("close-others-read");

        final String id;

        Kind(String id) {
            this.id = id;
        }
    }

    /** Signatures kept with their first stack trace; more are only counted. */
    private static final int MAX_SIGNATURES = 64;

    private final Map<Kind, Counters> byKind = new EnumMap<>(Kind.class);
    private final Map<String, Unexpected> unexpected = new ConcurrentHashMap<>();
    private final LongAdder unsignedUnexpected = new LongAdder();
    private final List<String> mismatches = new ArrayList<>(); // the first few, guarded by itself

    SoakStats() {
        for (Kind k : Kind.values()) {
            byKind.put(k, new Counters());
        }
    }

    static final class Counters {
        final LongAdder ops = new LongAdder();
        final LongAdder bytesChecked = new LongAdder();
        final LongAdder wrongBytes = new LongAdder();
        final LongAdder mismatches = new LongAdder();
        final LongAdder closedFailures = new LongAdder();
        final LongAdder unexpected = new LongAdder();
    }

    private static final class Unexpected {
        final LongAdder count = new LongAdder();
        final String kind;
        final String where;
        final String trace;

        Unexpected(String kind, String where, String trace) {
            this.kind = kind;
            this.where = where;
            this.trace = trace;
        }
    }

    Counters of(Kind kind) {
        return byKind.get(kind);
    }

    void op(Kind kind) {
        byKind.get(kind).ops.increment();
    }

    void checked(Kind kind, long bytes) {
        byKind.get(kind).bytesChecked.add(bytes);
    }

    /** A read that returned {@code wrongBytes} bytes other than the plaintext's (or ended in the wrong place). */
    void mismatch(Kind kind, long wrongBytes, String what) {
        Counters c = byKind.get(kind);
        c.wrongBytes.add(wrongBytes);
        c.mismatches.increment();
        synchronized (mismatches) {
            if (mismatches.size() < 20) {
                mismatches.add(kind.id + ": " + what);
            }
        }
    }

    void closedFailure(Kind kind) {
        byKind.get(kind).closedFailures.increment();
    }

    void unexpected(Kind kind, Throwable t, String where) {
        unexpected(kind, t, where, false);
    }

    /**
     * Something thrown that should not have been.
     *
     * @param closing whether another thread was closing the object meanwhile (kept apart in the
     *     summary: a close() race, not a failure on its own)
     */
    void unexpected(Kind kind, Throwable t, String where, boolean closing) {
        byKind.get(kind).unexpected.increment();
        String signature = signature(t) + (closing ? " [while another thread closed it]" : "");
        Unexpected u = unexpected.get(signature);
        if (u == null) {
            if (unexpected.size() >= MAX_SIGNATURES) {
                unsignedUnexpected.increment();
                return;
            }
            u = unexpected.computeIfAbsent(signature, s -> new Unexpected(kind.id, where, trace(t)));
        }
        u.count.increment();
    }

    /**
     * Whether {@code t} is the failure of a read on an object closed by another thread: a
     * {@link ClosedChannelException} (an {@code AsynchronousCloseException} too: the soak never
     * interrupts), or another {@link IOException} that says closed. Never an authentication
     * failure, whatever its message.
     */
    static boolean saysClosed(Throwable t) {
        if (t instanceof ClosedByInterruptException || t instanceof StreamAuthenticationException) {
            return false;
        }
        if (t instanceof ClosedChannelException) {
            return true;
        }
        return t instanceof IOException && t.getMessage() != null
                && t.getMessage().toLowerCase(Locale.ROOT).contains("closed");
    }

    /** Class, message with its numbers blanked, and the first sealpipe frame: one line per distinct failure. */
    static String signature(Throwable t) {
        StringBuilder s = new StringBuilder(t.getClass().getName());
        if (t.getMessage() != null) {
            String m = t.getMessage().replaceAll("[0-9]+", "#");
            s.append(": ").append(m, 0, Math.min(m.length(), 160));
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().startsWith("io.sealpipe.") && !e.getClassName().startsWith("io.sealpipe.soak.")) {
                s.append(" at ").append(e.getClassName()).append('.').append(e.getMethodName());
                break;
            }
        }
        if (t.getCause() != null && t.getCause() != t) {
            s.append(" <- ").append(t.getCause().getClass().getName());
        }
        return s.toString();
    }

    private static String trace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }

    long total(java.util.function.Function<Counters, LongAdder> field) {
        long sum = 0;
        for (Counters c : byKind.values()) {
            sum += field.apply(c).sum();
        }
        return sum;
    }

    /** One {@code soak-kind {...}} line per kind, then the unexpected failures and the first mismatches. */
    void print(PrintStream out) {
        for (Map.Entry<Kind, Counters> e : byKind.entrySet()) {
            Counters c = e.getValue();
            out.printf(Locale.ROOT, "soak-kind {\"kind\":\"%s\",\"ops\":%d,\"bytesChecked\":%d,\"wrongBytes\":%d,"
                    + "\"mismatches\":%d,\"closedFailures\":%d,\"unexpected\":%d}%n", e.getKey().id, c.ops.sum(),
                    c.bytesChecked.sum(), c.wrongBytes.sum(), c.mismatches.sum(), c.closedFailures.sum(),
                    c.unexpected.sum());
        }
        for (Map.Entry<String, Unexpected> e : unexpected.entrySet()) {
            Unexpected u = e.getValue();
            out.printf(Locale.ROOT, "soak-unexpected {\"count\":%d,\"kind\":\"%s\",\"signature\":\"%s\"}%n",
                    u.count.sum(), u.kind, json(e.getKey()));
            out.println("  first in: " + u.where);
            u.trace.lines().forEach(line -> out.println("  " + line));
        }
        if (unsignedUnexpected.sum() > 0) {
            out.printf(Locale.ROOT, "soak-unexpected {\"count\":%d,\"signature\":\"(more kinds than %d, not kept)\"}%n",
                    unsignedUnexpected.sum(), MAX_SIGNATURES);
        }
        synchronized (mismatches) {
            for (String m : mismatches) {
                out.println("soak-mismatch " + m);
            }
        }
    }

    static String json(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
