package io.sealpipe.it.hadoop;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
 *       configured class that does not load ({@value #CODEC_MISSING}).
 *   <li>{@code LocalJobRunner}'s warnings, with the exception that failed a job.
 * </ul>
 */
final class Logs {
    static final String ENGINE_LINE = "sealpipe engine ";
    static final String CODEC_USED = "Using crypto codec ";
    static final String CODEC_MISSING = "Crypto codec %s not found.";

    /** A line logged: its logger, its message and its exception (or null). */
    record Line(String logger, String message, Throwable thrown) {}

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
                LINES.add(new Line(event.getLoggerName(), event.getRenderedMessage(),
                        event.getThrowableInformation() == null ? null : event.getThrowableInformation().getThrowable()));
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
                "org.apache.hadoop.mapred.LocalJobRunner")) {
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

    /** Whether Hadoop reported in {@code lines} that configured codec class {@code codec} does not load. */
    static boolean codecMissing(List<Line> lines, String codec) {
        String line = String.format(CODEC_MISSING, codec);
        return lines.stream().anyMatch(l -> l.message().equals(line));
    }
}
