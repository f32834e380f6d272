package io.sealpipe.internal;

/**
 * sealpipe's logging: through SLF4J where the application has it, else through the JDK's
 * {@link System.Logger}. SLF4J is an optional dependency, so that the application's own SLF4J
 * (Hadoop's 1.7 with its reload4j binding, Spark's 2.x with its log4j2 provider) is the one on
 * the class path and sealpipe's lines go wherever the application's go; sealpipe calls only what
 * SLF4J 1.7 and 2.x share ({@code LoggerFactory.getLogger}, the level checks, {@code
 * LocationAwareLogger}, {@code MessageFormatter}). Without SLF4J, {@code System.Logger} writes
 * to java.util.logging (INFO and up on standard error, by default), or to the backend the
 * application installed as its {@code System.LoggerFinder}.
 *
 * <p>Messages take SLF4J's {@code {}} placeholders on both paths, and a {@code Throwable} as the
 * last argument is the exception, not an argument (as in SLF4J). Each logger is named after the
 * class that logs, and the backend reports that class, not this package's, as the location.
 * Instances are immutable and thread-safe.
 *
 * <pre>{@code
 * private static final Log LOG = Log.of(Engines.class);
 * LOG.info("sealpipe engine {}: {}", id, reason);
 * }</pre>
 */
public interface Log {
    /**
     * The logger named after {@code owner}: SLF4J's if SLF4J is on the class path, else the
     * JDK's {@code System.Logger}.
     */
    static Log of(Class<?> owner) {
        // Slf4jLog links against SLF4J: it must not be loaded when SLF4J is absent.
        return OptionalDependency.SLF4J.isPresent() ? Slf4jLog.of(owner)
                : new PlatformLog(System.getLogger(owner.getName()));
    }

    /** Logs at INFO, {@code format}'s {@code {}} placeholders replaced by {@code args} in order. */
    void info(String format, Object... args);

    /** Logs at WARN ({@code System.Logger}'s WARNING), as {@link #info}. */
    void warn(String format, Object... args);
}
