package io.sealpipe.it.spark;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A Spark application that declares sealpipe first among its dependencies (as this project
 * does) keeps Spark's logging: sealpipe's SLF4J is optional, so the application has Spark's
 * slf4j-api 2.x, whose provider is Spark's log4j-slf4j2-impl, and both Spark's lines and
 * sealpipe's reach log4j2. An slf4j-api 1.7 from sealpipe would win the same way and ignore
 * that provider (1.7 looks for {@code StaticLoggerBinder}): Spark's logging and sealpipe's would
 * go to the no-op logger. (Spark 3.5's own POMs resolve avro's slf4j-api 1.7.36 that way, with or
 * without sealpipe: {@code spark-3.5} manages it to Spark's 2.0.7, as an application must.)
 *
 * <p>One local-mode context with IO encryption on sealpipe's cipher logs both lines:
 * {@code SparkContext} its version (INFO) when it starts, and sealpipe's {@code Engines} its
 * engine (INFO, once per JVM: surefire runs each test class in a JVM of its own) at the first
 * encrypted shuffle block. An appender the test adds to log4j2 collects them; sealpipe's line
 * names {@code Engines}, not sealpipe's logging facade, as its location ({@code %C} in a pattern).
 */
class SparkLoggingTest {
    private static final String SPARK_CONTEXT = "org.apache.spark.SparkContext";
    private static final String ENGINES = "io.sealpipe.engine.Engines";

    /** A line logged: its logger, its message and the class log4j2 reports as its location. */
    private record Line(String logger, String message, String locationClass) {}

    /** The lines of the loggers it is added to. */
    private static final class Collector extends AbstractAppender {
        final List<Line> lines = new CopyOnWriteArrayList<>();

        Collector() {
            super("sealpipe-it-collector", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent event) {
            // The location comes from the stack of the thread that logs: found here.
            StackTraceElement source = event.getSource();
            lines.add(new Line(event.getLoggerName(), event.getMessage().getFormattedMessage(),
                    source == null ? null : source.getClassName()));
        }

        boolean logged(String logger, String messageStart, String locationClass) {
            return lines.stream().anyMatch(l -> l.logger().equals(logger) && l.message().startsWith(messageStart)
                    && (locationClass == null || locationClass.equals(l.locationClass())));
        }
    }

    @Test
    void sparkKeepsItsLog4j2ProviderAndSealpipeLogsThroughIt() throws Exception {
        // A logger from SLF4J starts log4j2 with log4j2-test.properties, as Spark's first one would.
        String factory = LoggerFactory.getILoggerFactory().getClass().getName();
        Collector collector = new Collector();
        collector.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        config.addAppender(collector);
        Configurator.setLevel(SPARK_CONTEXT, Level.INFO); // WARN for Spark in log4j2-test.properties
        for (String logger : List.of(SPARK_CONTEXT, "io.sealpipe")) {
            LoggerConfig own = config.getLoggerConfig(logger);
            assertEquals(logger, own.getName(), "a logger configuration of its own");
            own.addAppender(collector, Level.INFO, null);
        }
        context.updateLoggers();

        Path dir = Path.of(System.getProperty("sealpipe.it.dir", "target")).resolve("spark-local/logging");
        EncryptionJob.deleteTree(dir);
        try (JavaSparkContext sc = new JavaSparkContext(
                EncryptionJob.conf("logging", true, EncryptionJob.SEALPIPE_CIPHER, dir))) {
            assertEquals(10, EncryptionJob.smallShuffle(sc).size(), "the keys of the encrypted shuffle");
        }

        assertAll("logging on the class path of a Spark application with sealpipe declared first (lines: "
                        + collector.lines + ")",
                () -> assertTrue(jarOf(LoggerFactory.class).startsWith("slf4j-api-2."),
                        "Spark's slf4j-api 2.x: " + jarOf(LoggerFactory.class)),
                () -> assertEquals("org.apache.logging.slf4j.Log4jLoggerFactory", factory,
                        "SLF4J's provider is Spark's, log4j-slf4j2-impl"),
                () -> assertTrue(collector.logged(SPARK_CONTEXT, "Running Spark version ", null),
                        "Spark's line (SparkContext's version) reached log4j2"),
                () -> assertTrue(collector.logged(ENGINES, "sealpipe engine ", ENGINES),
                        "sealpipe's line (its engine) reached log4j2, with Engines as its location"));
    }

    /** The file name of the jar {@code type} was loaded from. */
    private static String jarOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).getFileName().toString();
    }
}
