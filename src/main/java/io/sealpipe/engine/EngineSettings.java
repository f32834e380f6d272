package io.sealpipe.engine;

import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeSet;

/**
 * The system properties that steer engine selection, read once into an immutable value.
 *
 * <ul>
 *   <li>{@value #ENGINE}: {@code auto} (default), {@code openssl-jni}, {@code openssl-jna}, {@code jce},
 *       {@code accp}: one engine for every operation (accp lacks AES-CTR and AES-CFB: those then
 *       come from auto's choice among the others)
 *   <li>{@code sealpipe.engine.OP} for an operation OP ({@code ctr}, {@code gcm-seal},
 *       {@code gcm-open}, {@code cfb}, {@code hmac-sha256}; {@code gcm} sets both GCM ones): the
 *       engine for that operation alone, over {@value #ENGINE}
 *   <li>{@value #WARMUP}: {@code false} turns off the background warm-up of JCE and loading of
 *       accp; a chosen engine then runs from the first call, cold</li>
 *   <li>{@value #REQUIRE}: {@code openssl} makes "no OpenSSL engine" an error instead of a JCE fallback
 *   <li>{@value #CPU_AESNI}: {@code false} simulates a CPU without hardware AES (AES-NI on x86,
 *       the ARMv8 AES instructions on aarch64)
 *   <li>{@value #LIBCRYPTO}: path of the libcrypto to load instead of the default search; if no
 *       OpenSSL engine can load it, auto is an error, not a JCE fallback
 *   <li>{@value #JCE_PROVIDER}: name of the JCE provider to use (default: the JDK's choice)
 * </ul>
 *
 * @param engine the forced engine, or empty for auto
 * @param requireOpenSsl whether a JCE outcome is an error
 * @param aesniDisabled whether hardware AES (AES-NI, ARMv8 AES) is treated as absent
 * @param libcrypto the libcrypto path, or null for the default search
 * @param jceProvider the JCE provider name, or null for the default
 * @param operations engines forced for single operations ({@code sealpipe.engine.OP})
 * @param warmup whether engines that start slowly (jce, accp) are warmed or loaded in the
 *     background while another engine runs their first calls
 */
public record EngineSettings(Optional<EngineKind> engine, boolean requireOpenSsl, boolean aesniDisabled,
        String libcrypto, String jceProvider, Map<Operation, EngineKind> operations, boolean warmup) {

    /**
     * Settings without per-operation engines, warm-up on.
     *
     * @param engine the forced engine, or empty for auto
     * @param requireOpenSsl whether a JCE outcome is an error
     * @param aesniDisabled whether hardware AES (AES-NI, ARMv8 AES) is treated as absent
     * @param libcrypto the libcrypto path, or null for the default search
     * @param jceProvider the JCE provider name, or null for the default
     */
    public EngineSettings(Optional<EngineKind> engine, boolean requireOpenSsl, boolean aesniDisabled,
            String libcrypto, String jceProvider) {
        this(engine, requireOpenSsl, aesniDisabled, libcrypto, jceProvider, Map.of(), true);
    }

    /**
     * Copies the per-operation map.
     *
     * @param engine the forced engine, or empty for auto
     * @param requireOpenSsl whether a JCE outcome is an error
     * @param aesniDisabled whether hardware AES (AES-NI, ARMv8 AES) is treated as absent
     * @param libcrypto the libcrypto path, or null for the default search
     * @param jceProvider the JCE provider name, or null for the default
     * @param operations the engine forced for single operations (may be empty)
     * @param warmup whether slow starters warm up in the background
     */
    public EngineSettings {
        operations = operations.isEmpty() ? Map.of() : Map.copyOf(operations);
    }

    /** System property that forces an engine: {@code auto} (default) or an engine id. */
    public static final String ENGINE = "sealpipe.engine";

    /** System property that forbids the JCE fallback when set to {@code openssl}. */
    public static final String REQUIRE = "sealpipe.engine.require";

    /**
     * System property that, set to {@code false}, makes sealpipe behave as without hardware AES
     * (AES-NI, ARMv8 AES).
     */
    public static final String CPU_AESNI = "sealpipe.cpu.aesni";

    /** System property naming the libcrypto file to load instead of the default search. */
    public static final String LIBCRYPTO = "sealpipe.openssl.libcrypto";

    /** System property naming the JCE provider of the jce engine. */
    public static final String JCE_PROVIDER = "sealpipe.jce.provider";

    /** System property that, set to {@code false}, turns off background warm-up and loading. */
    public static final String WARMUP = "sealpipe.engine.warmup";

    /** Prefix of the per-operation engine properties: {@code sealpipe.engine.ctr} and so on. */
    public static final String ENGINE_FOR = ENGINE + ".";

    /** The per-operation property for both AES-GCM operations. */
    public static final String ENGINE_FOR_GCM = ENGINE_FOR + "gcm";

    /**
     * The property that forces an engine for one operation.
     *
     * @param op an operation
     * @return {@code sealpipe.engine.} followed by the operation's id
     */
    public static String engineFor(Operation op) {
        return ENGINE_FOR + op.id();
    }

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
        return fromProperties(System.getProperties());
    }

    /**
     * Reads the {@code sealpipe.*} engine properties from a set of properties.
     *
     * @param p the properties, such as {@link System#getProperties()}
     * @return the settings they describe
     * @throws IllegalArgumentException naming a property whose value is not understood, or an
     *     unknown {@code sealpipe.engine.*} property
     */
    public static EngineSettings fromProperties(Properties p) {
        return new EngineSettings(
                parseEngine(p.getProperty(ENGINE)),
                parseRequire(p.getProperty(REQUIRE)),
                parseAesni(p.getProperty(CPU_AESNI)),
                blankToNull(p.getProperty(LIBCRYPTO)),
                blankToNull(p.getProperty(JCE_PROVIDER)),
                parseOperations(p),
                parseWarmup(p.getProperty(WARMUP)));
    }

    private static Map<Operation, EngineKind> parseOperations(Properties p) {
        Map<Operation, EngineKind> forced = new EnumMap<>(Operation.class);
        for (String name : new TreeSet<>(p.stringPropertyNames())) {
            if (!name.startsWith(ENGINE_FOR) || name.equals(REQUIRE) || name.equals(WARMUP)) {
                continue;
            }
            List<Operation> ops;
            if (name.equals(ENGINE_FOR_GCM)) {
                ops = List.of(Operation.GCM_SEAL, Operation.GCM_OPEN);
            } else {
                try {
                    ops = List.of(Operation.fromId(name.substring(ENGINE_FOR.length())));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(name + " is not a sealpipe property: per-operation engines are "
                            + ENGINE_FOR + "{ctr,gcm,gcm-seal,gcm-open,cfb,hmac-sha256}", e);
                }
            }
            String value = p.getProperty(name);
            Optional<EngineKind> kind;
            try {
                kind = parseEngine(value);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + "=" + value + " is not an engine: use auto, "
                        + EngineKind.allIds(), e);
            }
            for (Operation op : ops) {
                if (kind.isPresent() && !kind.get().supports(op)) {
                    throw new IllegalArgumentException(name + "=" + value + ": " + kind.get().id() + " has no "
                            + op.id() + "; use another engine for it or auto");
                }
                // the specific property (gcm-seal) wins over the shared one (gcm), whatever the order
                if (kind.isPresent() && (!forced.containsKey(op) || !name.equals(ENGINE_FOR_GCM))) {
                    forced.put(op, kind.get());
                }
            }
        }
        return forced;
    }

    private static boolean parseWarmup(String value) {
        if (value == null || value.isBlank()) {
            return true;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(
                    WARMUP + "=" + value + " is not understood: use true (default) or false");
        };
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
        return new EngineSettings(kind, requireOpenSsl, aesniDisabled, libcrypto, jceProvider, operations, warmup);
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
