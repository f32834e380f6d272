package io.sealpipe.engine;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The crypto engines sealpipe can run on, named as in {@code sealpipe.engine} and {@code info}. */
public enum EngineKind {
    /** sealpipe's own JNI bridge to libcrypto (OpenSSL 3.x or 1.1): the fastest. */
    OPENSSL_JNI("openssl-jni"),
    /** The same libcrypto calls through JNA, for platforms without our native library. */
    OPENSSL_JNA("openssl-jna"),
    /** {@code javax.crypto} with the configured provider (SunJCE by default). */
    JCE("jce");

    private final String id;

    EngineKind(String id) {
        this.id = id;
    }

    /**
     * The name used in system properties, the CLI and reports.
     *
     * @return {@code openssl-jni}, {@code openssl-jna} or {@code jce}
     */
    public String id() {
        return id;
    }

    /**
     * Whether this engine runs on OpenSSL's libcrypto.
     *
     * @return true for openssl-jni and openssl-jna, false for jce
     */
    public boolean isOpenSsl() {
        return this != JCE;
    }

    /**
     * Parses an engine name, ignoring case and surrounding blanks. {@code auto} is not a kind:
     * see {@link EngineSettings#parseEngine(String)} for that.
     *
     * @param id an engine name, as returned by {@link #id()}
     * @return the kind of that name
     * @throws IllegalArgumentException naming the value and the allowed ones
     */
    public static EngineKind fromId(String id) {
        String wanted = id.trim().toLowerCase(Locale.ROOT);
        for (EngineKind kind : values()) {
            if (kind.id.equals(wanted)) {
                return kind;
            }
        }
        throw new IllegalArgumentException(
                "unknown engine '" + id + "': use one of " + allIds() + " or auto");
    }

    static String allIds() {
        return Arrays.stream(values()).map(EngineKind::id).collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return id;
    }
}
