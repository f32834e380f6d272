package io.sealpipe.engine;

import java.util.Locale;
import java.util.Optional;

/**
 * The system properties that steer engine selection, read once into an immutable value.
 *
 * <ul>
 *   <li>{@value #ENGINE}: {@code auto} (default), {@code openssl-jni}, {@code openssl-jna}, {@code jce}
 *   <li>{@value #REQUIRE}: {@code openssl} makes "no OpenSSL engine" an error instead of a JCE fallback
 *   <li>{@value #CPU_AESNI}: {@code false} simulates a CPU without AES-NI
 *   <li>{@value #LIBCRYPTO}: path of the libcrypto to load instead of the default search; if no
 *       OpenSSL engine can load it, auto is an error, not a JCE fallback
 *   <li>{@value #JCE_PROVIDER}: name of the JCE provider to use (default: the JDK's choice)
 * </ul>
 *
 * @param engine the forced engine, or empty for auto
 * @param requireOpenSsl whether a JCE outcome is an error
 * @param aesniDisabled whether AES-NI is treated as absent
 * @param libcrypto the libcrypto path, or null for the default search
 * @param jceProvider the JCE provider name, or null for the default
 */
public record EngineSettings(Optional<EngineKind> engine, boolean requireOpenSsl, boolean aesniDisabled,
        String libcrypto, String jceProvider) {

    /** System property that forces an engine: {@code auto} (default) or an engine id. */
    public static final String ENGINE = "sealpipe.engine";

    /** System property that forbids the JCE fallback when set to {@code openssl}. */
    public static final String REQUIRE = "sealpipe.engine.require";

    /** System property that, set to {@code false}, makes sealpipe behave as without AES-NI. */
    public static final String CPU_AESNI = "sealpipe.cpu.aesni";

    /** System property naming the libcrypto file to load instead of the default search. */
    public static final String LIBCRYPTO = "sealpipe.openssl.libcrypto";

    /** System property naming the JCE provider of the jce engine. */
    public static final String JCE_PROVIDER = "sealpipe.jce.provider";

    /**
     * Default settings: auto, fallback allowed, real CPU, default libcrypto and provider.
     *
     * @return the settings of a JVM that sets none of the properties
     */
    public static EngineSettings defaults() {
        return new EngineSettings(Optional.empty(), false, false, null, null);
    }

    /**
     * Reads the system properties. Blank values count as unset.
     *
     * @return the settings they describe
     * @throws IllegalArgumentException naming a property whose value is not understood
     */
    public static EngineSettings fromSystemProperties() {
        return new EngineSettings(
                parseEngine(System.getProperty(ENGINE)),
                parseRequire(System.getProperty(REQUIRE)),
                parseAesni(System.getProperty(CPU_AESNI)),
                blankToNull(System.getProperty(LIBCRYPTO)),
                blankToNull(System.getProperty(JCE_PROVIDER)));
    }

    /**
     * Parses a value of {@value #ENGINE}.
     *
     * @param value {@code auto}, an engine id, blank or null (case and surrounding blanks ignored)
     * @return the forced engine, or empty for {@code auto}, blank or null
     * @throws IllegalArgumentException naming the value and the allowed ones
     */
    public static Optional<EngineKind> parseEngine(String value) {
        if (value == null || value.isBlank() || value.trim().equalsIgnoreCase("auto")) {
            return Optional.empty();
        }
        try {
            return Optional.of(EngineKind.fromId(value));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ENGINE + "=" + value + " is not an engine: use auto, "
                    + EngineKind.allIds(), e);
        }
    }

    /**
     * Returns a copy with another forced engine.
     *
     * @param kind the engine to force, or empty for auto
     * @return new settings, the rest unchanged
     */
    public EngineSettings withEngine(Optional<EngineKind> kind) {
        return new EngineSettings(kind, requireOpenSsl, aesniDisabled, libcrypto, jceProvider);
    }

    private static boolean parseRequire(String value) {
        if (value == null || value.isBlank() || value.trim().equalsIgnoreCase("none")) {
            return false;
        }
        if (value.trim().equalsIgnoreCase("openssl")) {
            return true;
        }
        throw new IllegalArgumentException(REQUIRE + "=" + value + " is not understood: use openssl or none");
    }

    private static boolean parseAesni(String value) {
        if (value == null || value.isBlank()) {
            return false;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "false" -> true;
            case "true", "auto" -> false;
            default -> throw new IllegalArgumentException(
                    CPU_AESNI + "=" + value + " is not understood: use false (simulate no AES-NI) or true");
        };
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }
}
