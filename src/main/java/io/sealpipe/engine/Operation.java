package io.sealpipe.engine;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The operations {@code auto} chooses an engine for, one by one: the fastest engine for AES-CTR
 * on a CPU is not always the fastest for AES-GCM. Named as in {@code info --json}'s
 * {@code "operations"} and in the per-operation properties of {@link EngineSettings}.
 */
public enum Operation {
    /** AES-CTR ({@link CryptoEngine#newAesCtr}). */
    CTR("ctr"),
    /** AES-GCM sealing ({@link AeadCipher#seal}, {@link AeadCipher#sealChunks}). */
    GCM_SEAL("gcm-seal"),
    /** AES-GCM opening ({@link AeadCipher#open}, {@link AeadCipher#openChunks}). */
    GCM_OPEN("gcm-open"),
    /** AES-CFB128 ({@link CryptoEngine#newAesCfb}). */
    CFB("cfb"),
    /** HMAC-SHA256 ({@link CryptoEngine#newHmacSha256}). */
    HMAC_SHA256("hmac-sha256");

    private final String id;

    Operation(String id) {
        this.id = id;
    }

    /**
     * The name used in reports and properties.
     *
     * @return {@code ctr}, {@code gcm-seal}, {@code gcm-open}, {@code cfb} or {@code hmac-sha256}
     */
    public String id() {
        return id;
    }

    /**
     * Parses an operation name, ignoring case and surrounding blanks.
     *
     * @param id an operation name, as returned by {@link #id()}
     * @return the operation of that name
     * @throws IllegalArgumentException naming the value and the allowed ones
     */
    public static Operation fromId(String id) {
        String wanted = id.trim().toLowerCase(Locale.ROOT);
        for (Operation op : values()) {
            if (op.id.equals(wanted)) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown operation '" + id + "': use one of "
                + Arrays.stream(values()).map(Operation::id).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return id;
    }
}
