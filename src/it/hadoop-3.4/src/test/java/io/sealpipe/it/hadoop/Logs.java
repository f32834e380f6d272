package io.sealpipe.it.hadoop;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;

/**
 * What was logged in this JVM that shows which AES-CTR codec ran, collected from Hadoop's log4j
 * (reload4j, behind SLF4J; levels in {@code log4j.properties}):
 *
 * <ul>
 *   <li>sealpipe's own lines (logger {@code io.sealpipe}). It logs a line starting {@value
 *       #ENGINE_LINE} once per JVM, when its engine is first chosen: in a JVM where the tests
 *       touch sealpipe only through Hadoop, that line means Hadoop made a cipher with sealpipe's
 *       codec. Surefire runs each test class in a JVM of its own, so the line of one class
 *       cannot come from another.
 *   <li>Hadoop's {@code CryptoCodec.getInstance}, which logs at DEBUG (logger {@code
 *       PerformanceAdvisory}) the class of each codec it makes ({@value #CODEC_USED}), and each
 *       configured class that does not load ({@value #CODEC_MISSING}). The appender also
 *       records who asked for each codec (the method that called {@code getInstance}), because
 *       the same line comes from a DFS client's crypto streams ({@value #STREAM_CODEC_CALLER}) and
 *       from its key provider decrypting the file's data key ({@code
 *       KeyProviderCryptoExtension$DefaultCryptoExtension}).
 *   <li>{@code LocalJobRunner}'s warnings, with the exception that failed a job.
 * </ul>
 */
final class Logs {
    static final String ENGINE_LINE = "sealpipe engine ";
    static final String CODEC_USED = "Using crypto codec ";
    static final String CODEC_MISSING = "Crypto codec %s not found.";
    /**
     * Where Hadoop 3.4's DFS client makes the codec of a file's crypto stream, for {@code
     * DFSClient.createWrappedOutputStream} and {@code HdfsKMSUtil.createWrappedInputStream}.
     */
    static final String STREAM_CODEC_CALLER = "org.apache.hadoop.hdfs.HdfsKMSUtil.getCryptoCodec";
    private static final String CRYPTO_CODEC = "org.apache.hadoop.crypto.CryptoCodec";
    private static final String LOCAL_JOB_RUNNER = "org.apache.hadoop.mapred.LocalJobRunner";

    /**
     * A line logged: its logger, its message, its exception (or null), for a codec made, the
     * method that called {@code CryptoCodec.getInstance} (else null), and for sealpipe's lines,
     * the class that log4j reports as the location (else null).
     */
    record Line(String logger, String message, Throwable thrown, String codecCaller, String locationClass) {}

    private static final List<Line> LINES = new CopyOnWriteArrayList<>();
    private static boolean installed;

    private Logs() {}

    /** Collects from now on; call before anything can make a codec. */
    static synchronized void install() {
        if (installed) {
            return;
        }
        AppenderSkeleton appender = new AppenderSkeleton() {
            @Override
            protected void append(LoggingEvent event) {
                String message = event.getRenderedMessage();
                // Appenders run in the thread that logs: the stack is getInstance's caller's.
                String caller = message != null && message.startsWith(CODEC_USED) ? codecCaller(new Throwable().getStackTrace()) : null;
                String location = event.getLoggerName().startsWith("io.sealpipe")
                        ? event.getLocationInformation().getClassName() : null;
                LINES.add(new Line(event.getLoggerName(), message,
                        event.getThrowableInformation() == null ? null
                                : event.getThrowableInformation().getThrowable(), caller,
                        location));
            }

            @Override
            public boolean requiresLayout() {
                return false;
            }

            @Override
            public void close() {
                // nothing held
            }
        };
        // Logger.getLogger configures log4j from log4j.properties first.
        for (String logger : List.of("io.sealpipe", "org.apache.hadoop.util.PerformanceAdvisory",
                LOCAL_JOB_RUNNER)) {
            Logger.getLogger(logger).addAppender(appender);
        }
        installed = true;
    }

    /** How many lines were collected so far: a mark for {@link #since(int)}. */
    static int mark() {
        return LINES.size();
    }

    /** The lines collected since {@code mark}. */
    static List<Line> since(int mark) {
        List<Line> all = List.copyOf(LINES);
        return all.subList(mark, all.size());
    }

    /** The method below the last {@code CryptoCodec} frame of {@code stack}, or null. */
    private static String codecCaller(StackTraceElement[] stack) {
        for (int i = stack.length - 2; i >= 0; i--) {
            if (stack[i].getClassName().equals(CRYPTO_CODEC)) {
                return stack[i + 1].getClassName() + "." + stack[i + 1].getMethodName();
            }
        }
        return null;
    }

    /**
     * The lines collected since {@code mark}, once one of them matches {@code wanted}; fails
     * after {@code timeout}. For a line that another thread logs after what the test waited for
     * (the {@code LocalJobRunner} sets a job's state before it logs why the job failed).
     */
    static List<Line> awaitSince(int mark, Predicate<Line> wanted, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<Line> lines = since(mark);
            if (lines.stream().anyMatch(wanted)) {
                return lines;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not logged within " + timeout.toSeconds() + " s: " + what + "; logged: " + lines);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /** Whether {@code line} is the {@code LocalJobRunner}'s, with an exception. */
    static boolean jobRunnerFailure(Line line) {
        return line.logger().equals(LOCAL_JOB_RUNNER) && line.thrown() != null;
    }

    /** sealpipe's messages among {@code lines}. */
    static List<String> sealpipe(List<Line> lines) {
        return lines.stream().filter(l -> l.logger().startsWith("io.sealpipe")).map(Line::message).toList();
    }

    /** Whether sealpipe chose its engine in {@code lines}, and so made a cipher. */
    static boolean engineChosen(List<Line> lines) {
        return sealpipe(lines).stream().anyMatch(m -> m.startsWith(ENGINE_LINE));
    }

    /** How many codecs of class {@code codec} Hadoop made in {@code lines}. */
    static long codecsMade(List<Line> lines, String codec) {
        String line = CODEC_USED + codec + ".";
        return lines.stream().filter(l -> l.message().equals(line)).count();
    }

    /**
     * How many codecs of class {@code codec} a DFS client made for its crypto streams in {@code
     * lines}: one per file opened or created in an encryption zone, not counting the codecs its
     * key provider makes to decrypt the files' data keys.
     */
    static long streamCodecsMade(List<Line> lines, String codec) {
        String line = CODEC_USED + codec + ".";
        return lines.stream().filter(l -> l.message().equals(line) && STREAM_CODEC_CALLER.equals(l.codecCaller())).count();
    }

    /** Whether Hadoop reported in {@code lines} that configured codec class {@code codec} does not load. */
    static boolean codecMissing(List<Line> lines, String codec) {
        String line = String.format(CODEC_MISSING, codec);
        return lines.stream().anyMatch(l -> l.message().equals(line));
    }
}
