package io.sealpipe.engine;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The rule that picks an engine, separate from probing so it can be tested with any inputs.
 *
 * <p>{@code auto}: openssl-jni if it loaded and the CPU has AES-NI; else openssl-jna if
 * libcrypto loaded through JNA and the CPU has AES-NI; else jce. A forced engine is used if it
 * is available and is an error otherwise. With {@code require=openssl}, ending on jce is an
 * error; so is an explicit {@code sealpipe.openssl.libcrypto} that no OpenSSL engine could load
 * (auto falls back to jce only from the default libcrypto search). Never a silent fallback:
 * every rejected engine carries its reason.
 *
 * <p>Plumbing of {@link Engines}, public so that the rule can be read and tested on its own;
 * applications call {@link Engines} and read the outcome in {@link Engines#report()}.
 */
public final class EngineSelector {
    private EngineSelector() {}

    private static final List<EngineKind> PREFERENCE =
            List.of(EngineKind.OPENSSL_JNI, EngineKind.OPENSSL_JNA, EngineKind.JCE);

    /**
     * Applies the rule to probed facts; probes nothing itself.
     *
     * @param settings the forced engine, the OpenSSL requirement and the libcrypto path
     * @param cpu the CPU's features (auto takes an OpenSSL engine only with AES-NI)
     * @param statuses each engine's availability; one entry per {@link EngineKind}
     * @param opensslVersion OpenSSL's version string, for the report
     * @param opensslPath the libcrypto file, for the report
     * @return the report; its {@code chosen} is empty when no engine may be used, and its
     *     {@code decision} then says why
     */
    public static EngineReport select(EngineSettings settings, CpuFeatures cpu, List<EngineStatus> statuses,
            Optional<String> opensslVersion, Optional<String> opensslPath) {
        Map<EngineKind, EngineStatus> byKind = new EnumMap<>(EngineKind.class);
        statuses.forEach(s -> byKind.put(s.kind(), s));
        Map<EngineKind, String> notChosen = new EnumMap<>(EngineKind.class);
        EngineKind chosen = null;
        String decision;

        if (settings.engine().isPresent()) {
            EngineKind forced = settings.engine().get();
            EngineStatus status = byKind.get(forced);
            for (EngineKind other : PREFERENCE) {
                if (other != forced) {
                    notChosen.put(other, EngineSettings.ENGINE + "=" + forced.id() + " forces another engine");
                }
            }
            if (settings.requireOpenSsl() && !forced.isOpenSsl()) {
                decision = EngineSettings.ENGINE + "=" + forced.id() + " contradicts " + EngineSettings.REQUIRE
                        + "=openssl: force an OpenSSL engine or drop the requirement";
            } else if (!status.available()) {
                decision = forced.id() + " was forced (" + EngineSettings.ENGINE + ") but is unavailable: "
                        + status.reason();
            } else {
                chosen = forced;
                decision = "forced by " + EngineSettings.ENGINE + "=" + forced.id()
                        + (forced.isOpenSsl() && !cpu.aesni() ? " (note: no AES-NI, OpenSSL runs without it)" : "");
            }
        } else {
            for (EngineKind kind : PREFERENCE) {
                EngineStatus status = byKind.get(kind);
                if (chosen != null) {
                    notChosen.put(kind, status.available() ? chosen.id() + " is preferred" : status.reason());
                } else if (!status.available()) {
                    notChosen.put(kind, status.reason());
                } else if (kind.isOpenSsl() && !cpu.aesni()) {
                    notChosen.put(kind, "no AES-NI on this CPU" + (cpu.aesniSimulatedOff()
                            ? " (simulated by " + EngineSettings.CPU_AESNI + "=false)" : "")
                            + ": auto uses OpenSSL only with AES-NI");
                } else {
                    chosen = kind;
                }
            }
            if (chosen == null) {
                decision = "no engine is available";
            } else if (chosen.isOpenSsl()) {
                decision = "auto: " + byKind.get(chosen).reason() + ", AES-NI present";
            } else if (settings.libcrypto() != null && openSslUnavailable(byKind)) {
                decision = EngineSettings.LIBCRYPTO + "=" + settings.libcrypto() + " did not load ("
                        + EngineKind.OPENSSL_JNI.id() + ": " + byKind.get(EngineKind.OPENSSL_JNI).reason() + "; "
                        + EngineKind.OPENSSL_JNA.id() + ": " + byKind.get(EngineKind.OPENSSL_JNA).reason()
                        + "): fix the path or unset the property (auto then looks for libcrypto.so.3, .so.1.1 and"
                        + " .so, and uses JCE if none loads)";
                chosen = null;
            } else if (settings.requireOpenSsl()) {
                decision = "no OpenSSL engine can be used and " + EngineSettings.REQUIRE
                        + "=openssl forbids the JCE fallback: install OpenSSL 3 or 1.1 (libcrypto.so.3), set -D"
                        + EngineSettings.LIBCRYPTO + "=PATH, or drop the requirement";
                chosen = null;
            } else {
                decision = "auto: JCE, because neither OpenSSL engine can be used here (reasons below)";
            }
        }
        return new EngineReport(cpu, opensslVersion, opensslPath, List.copyOf(statuses), Optional.ofNullable(chosen),
                decision, notChosen, settings);
    }

    private static boolean openSslUnavailable(Map<EngineKind, EngineStatus> byKind) {
        return PREFERENCE.stream().filter(EngineKind::isOpenSsl).noneMatch(k -> byKind.get(k).available());
    }
}
