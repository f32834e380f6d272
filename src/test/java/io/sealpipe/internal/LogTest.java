package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * sealpipe's logging facade: SLF4J where it is on the class path (as here), and without it the
 * JDK's {@code System.Logger}, here its default backend java.util.logging, whose records a
 * handler collects. The run without SLF4J on the class path is {@code OptionalDependenciesIT}'s.
 */
class LogTest {
    private static final String NAME = "io.sealpipe.internal.LogTest.platform";

    private final List<LogRecord> records = new ArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            record.getSourceClassName(); // infers the caller now, in the thread that logged
            records.add(record);
        }

        @Override
        public void flush() {
            // nothing buffered
        }

        @Override
        public void close() {
            // nothing held
        }
    };
    private Logger jul; // held: java.util.logging keeps its loggers weakly

    @BeforeEach
    void collect() {
        jul = Logger.getLogger(NAME);
        jul.setUseParentHandlers(false);
        jul.addHandler(handler);
    }

    @AfterEach
    void stopCollecting() {
        jul.removeHandler(handler);
        jul.setLevel(null);
    }

    private static Log platformLog() {
        return new PlatformLog(System.getLogger(NAME));
    }

    @Test
    void slf4jWhereItIsOnTheClassPath() {
        assertEquals(Slf4jLog.class, Log.of(LogTest.class).getClass());
    }

    @Test
    void withoutSlf4jPlaceholdersAreFilledAndLevelsMapped() {
        Log log = platformLog();
        log.info("sealpipe engine {}: {}; operations: {}", "jce", "forced", List.of("ctr=jce"));
        log.warn("no {} here {}", (Object) null);
        log.info("{} and {}", 1, 2, 3); // an argument too many that is not a Throwable is dropped
        log.info("no placeholders");

        assertEquals(List.of("sealpipe engine jce: forced; operations: [ctr=jce]", "no null here {}", "1 and 2",
                "no placeholders"), records.stream().map(LogRecord::getMessage).toList());
        assertEquals(List.of(Level.INFO, Level.WARNING, Level.INFO, Level.INFO),
                records.stream().map(LogRecord::getLevel).toList());
        LogRecord first = records.get(0);
        assertEquals(NAME, first.getLoggerName());
        assertNull(first.getParameters(), "a finished message: no MessageFormat on it");
        assertNull(first.getThrown());
        // The JDK skips System.Logger classes when it infers the source: the class that logged.
        assertEquals(LogTest.class.getName(), first.getSourceClassName());
        assertEquals("withoutSlf4jPlaceholdersAreFilledAndLevelsMapped", first.getSourceMethodName());
    }

    @Test
    void withoutSlf4jATrailingThrowableIsTheException() {
        Log log = platformLog();
        IllegalStateException failure = new IllegalStateException("broken");
        log.warn("accp did not load ({})", "its library", failure);
        log.warn("still {}", failure); // the exception even with a placeholder left, as in SLF4J

        assertEquals("accp did not load (its library)", records.get(0).getMessage());
        assertSame(failure, records.get(0).getThrown());
        assertEquals("still {}", records.get(1).getMessage());
        assertSame(failure, records.get(1).getThrown());
    }

    @Test
    void withoutSlf4jLevelsBelowTheLoggersAreDropped() {
        jul.setLevel(Level.WARNING);
        Log log = platformLog();
        log.info("dropped {}", 1);
        log.warn("kept {}", 2);

        assertEquals(List.of("kept 2"), records.stream().map(LogRecord::getMessage).toList());
    }
}
