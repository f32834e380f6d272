package io.sealpipe.internal;

import java.util.ResourceBundle;

/**
 * {@link Log} over the JDK's {@link System.Logger}, where SLF4J is absent: formats SLF4J's
 * {@code {}} placeholders itself and hands the backend a finished message. It is a {@code
 * System.Logger} too (delegating every call) only so that the JDK's caller inference, which
 * skips the frames of {@code System.Logger} classes, reports the sealpipe class that logged as
 * the source (java.util.logging's default format prints it), not this one.
 */
final class PlatformLog implements Log, System.Logger {
    private static final String PLACEHOLDER = "{}";

    private final System.Logger logger;

    PlatformLog(System.Logger logger) {
        this.logger = logger;
    }

    @Override
    public void info(String format, Object... args) {
        write(Level.INFO, format, args);
    }

    @Override
    public void warn(String format, Object... args) {
        write(Level.WARNING, format, args);
    }

    private void write(Level level, String format, Object[] args) {
        if (!logger.isLoggable(level)) {
            return;
        }
        Object[] values = args == null ? new Object[0] : args;
        // As SLF4J (1.7.36 and 2.x): a Throwable last is the exception, not an argument.
        Throwable thrown = values.length > 0 && values[values.length - 1] instanceof Throwable t ? t : null;
        String message = format(format, values, thrown == null ? values.length : values.length - 1);
        if (thrown == null) {
            logger.log(level, message);
        } else {
            logger.log(level, message, thrown);
        }
    }

    /**
     * {@code format} with its placeholders replaced by the first {@code count} of {@code args} in
     * order, each as {@link String#valueOf(Object)} writes it; placeholders beyond them stay as
     * they are (as SLF4J leaves them).
     */
    private static String format(String format, Object[] args, int count) {
        StringBuilder out = new StringBuilder(format.length() + 16 * count);
        int from = 0;
        for (int i = 0; i < count; i++) {
            int at = format.indexOf(PLACEHOLDER, from);
            if (at < 0) {
                break;
            }
            out.append(format, from, at);
            out.append(args[i]);
            from = at + PLACEHOLDER.length();
        }
        return out.append(format, from, format.length()).toString();
    }

    @Override
    public String getName() {
        return logger.getName();
    }

    @Override
    public boolean isLoggable(Level level) {
        return logger.isLoggable(level);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String message, Throwable thrown) {
        logger.log(level, bundle, message, thrown);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        logger.log(level, bundle, format, params);
    }
}
