package io.sealpipe.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.helpers.FormattingTuple;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LocationAwareLogger;

/**
 * {@link Log} over SLF4J, 1.7 or 2.x: this class links against SLF4J, so {@link Log#of} loads it
 * only once {@link OptionalDependency#SLF4J} is present. Through a binding that knows locations
 * (reload4j's, log4j2's: {@link LocationAwareLogger}) the message is formatted here and passed
 * with this class's name as the boundary, so that a pattern's {@code %C} or {@code %L} names the
 * sealpipe class that logged, not this one; other bindings get SLF4J's plain calls.
 */
final class Slf4jLog implements Log {
    private static final String FQCN = Slf4jLog.class.getName();

    private final Logger logger;

    private Slf4jLog(Logger logger) {
        this.logger = logger;
    }

    /** Declared as {@link Log}, so that verifying {@link Log#of} needs no SLF4J type. */
    static Log of(Class<?> owner) {
        return new Slf4jLog(LoggerFactory.getLogger(owner));
    }

    @Override
    public void info(String format, Object... args) {
        if (!logger.isInfoEnabled()) {
            return;
        }
        if (logger instanceof LocationAwareLogger located) {
            log(located, LocationAwareLogger.INFO_INT, format, args);
        } else {
            logger.info(format, args);
        }
    }

    @Override
    public void warn(String format, Object... args) {
        if (!logger.isWarnEnabled()) {
            return;
        }
        if (logger instanceof LocationAwareLogger located) {
            log(located, LocationAwareLogger.WARN_INT, format, args);
        } else {
            logger.warn(format, args);
        }
    }

    /**
     * Formatted here: slf4j-reload4j 1.7 (Hadoop's binding) logs this call's message as it is and
     * drops its arguments.
     */
    private static void log(LocationAwareLogger logger, int level, String format, Object[] args) {
        FormattingTuple message = MessageFormatter.arrayFormat(format, args);
        logger.log(null, FQCN, level, message.getMessage(), null, message.getThrowable());
    }
}
