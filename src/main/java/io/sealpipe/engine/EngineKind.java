package io.sealpipe.engine;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/** The crypto engines sealpipe can run on, named as in {@code sealpipe.engine} and {@code info}. */
public enum EngineKind {
    /** sealpipe's own JNI bridge to libcrypto (OpenSSL 3.x or 1.1): the fastest. */
    OPENSSL_JNI("openssl-jni"),
    /** The same libcrypto calls through JNA, for platforms without our native library. */
    OPENSSL_JNA("openssl-jna"),
    /** {@code javax.crypto} with the configured provider (SunJCE by default). */
    JCE("jce"),
    /**
     * The Amazon Corretto Crypto Provider (AWS-LC through its JCE provider), when it is on the
     * class path: AES-GCM and HMAC-SHA256 only (it has no AES-CTR or AES-CFB).
     */
    ACCP("accp", EnumSet.of(Operation.GCM_SEAL, Operation.GCM_OPEN, Operation.HMAC_SHA256));

    private final String id;
    private final Set<Operation> operations;

    EngineKind(String id) {
        this(id, EnumSet.allOf(Operation.class));
    }

    EngineKind(String id, Set<Operation> operations) {
        this.id = id;
        this.operations = operations;
    }

    /**
     * The name used in system properties, the CLI and reports.
     *
     * @return {@code openssl-jni}, {@code openssl-jna}, {@code jce} or {@code accp}
     */
    public String id() {
        return id;
    }

    /**
     * Whether this engine runs on OpenSSL's libcrypto.
     *
     * @return true for openssl-jni and openssl-jna, false for jce and accp
     */
    public boolean isOpenSsl() {
        return this == OPENSSL_JNI || this == OPENSSL_JNA;
    }

    /**
     * Whether this engine offers an operation at all (whether it is available here is
     * {@link EngineStatus}'s business).
     *
     * @param op an operation
     * @return false only for what the engine lacks: accp has no AES-CTR and no AES-CFB
     */
    public boolean supports(Operation op) {
        return operations.contains(op);
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
