package io.sealpipe.engine;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rule that picks an engine, separate from probing so it can be tested with any inputs.
 *
 * <p>{@code auto}: openssl-jni if it loaded and the CPU has hardware AES; else openssl-jna if
 * libcrypto loaded through JNA and the CPU has hardware AES; else jce. Hardware AES is AES-NI on
 * x86-64 and, on aarch64, the AES instructions of the ARMv8 Cryptography Extensions (read from
 * {@code AT_HWCAP}, with PMULL beside them, which GCM uses): on aarch64 auto takes openssl-jni,
 * then openssl-jna, then jce exactly as with AES-NI on x86-64. A forced engine is used if it
 * is available and is an error otherwise. With {@code require=openssl}, ending on jce is an
 * error; so is an explicit {@code sealpipe.openssl.libcrypto} that no OpenSSL engine could load
 * (auto falls back to jce only from the default libcrypto search). Never a silent fallback:
 * every rejected engine carries its reason.
 *
 * <p>That engine is the base of a choice per {@link Operation}: under {@code auto}, an operation
 * moves to another engine only where a rule knows it to be faster on this host:
 * <ul>
 *   <li><b>ctr</b>: jce, when HotSpot runs AES-CTR with its AVX-512 VAES intrinsic
 *       ({@link JavaRuntime#avx512AesCtr}); OpenSSL's AES-CTR has no VAES code (measured 2.5&times;
 *       faster on an Intel Xeon with AVX-512; on an AMD EPYC without it, OpenSSL is faster).
 *   <li><b>gcm-seal</b>: accp when it is on the class path (AWS-LC's AES-GCM); otherwise jce when
 *       HotSpot has its AVX-512 AES-GCM intrinsic and OpenSSL is older than 3.1 (which added its
 *       own AVX-512 AES-GCM).
 *   <li><b>gcm-open</b>: accp when it is on the class path. Never jce by this rule: SunJCE buffers
 *       a whole GCM decryption before it decrypts, and opened 16 KiB chunks slower than OpenSSL
 *       even with AVX-512.
 *   <li><b>cfb</b> and <b>hmac-sha256</b>: the base engine.
 * </ul>
 * The moves to jce are rules for HotSpot's x86 AVX-512 intrinsics: none applies on aarch64 (or
 * any other architecture), where every operation stays on the base engine unless accp, on the
 * class path, takes AES-GCM (accp's rule is the same everywhere: when it is on the class path).
 * Properties {@code sealpipe.engine.OP} force an engine for one operation; {@code sealpipe.engine}
 * forces one for all that it supports. Engines that start slowly (jce until C2 has compiled its
 * intrinsics, accp until its library has loaded) get the base engine for their first calls,
 * unless {@value EngineSettings#WARMUP}{@code =false}.
 *
 * <p><b>Where the rule is measured:</b> on {@code linux-x86_64} only ({@link #MEASURED_ON}: AMD
 * EPYC Zen 3 and Zen 4, Intel Xeon Ice Lake; docs/PERFORMANCE.md). It is not measured on
 * {@code linux-aarch64}: we have no Arm hardware, and the only aarch64 runs are under qemu
 * emulation, where speed means nothing. There, and on every other {@link Platform}, the rule is
 * the x86 rule carried over, with no measured speed behind it, and the report says so
 * ({@link EngineReport#autoNote()}): run {@code sealpipe speed} there to compare the engines, and
 * force one with {@code sealpipe.engine} or {@code sealpipe.engine.OP}.
 *
 * <p>Plumbing of {@link Engines}, public so that the rule can be read and tested on its own;
 * applications call {@link Engines} and read the outcome in {@link Engines#report()}.
 */
public final class EngineSelector {
    private EngineSelector() {}

    private static final List<EngineKind> PREFERENCE =
            List.of(EngineKind.OPENSSL_JNI, EngineKind.OPENSSL_JNA, EngineKind.JCE);

    /** The {@link Platform#id()}s auto's rule was measured on (docs/PERFORMANCE.md). */
    public static final Set<String> MEASURED_ON = Set.of("linux-x86_64");

    /**
     * Whether auto's rule was measured on a platform.
     *
     * @param platform a platform
     * @return true only for the ids in {@link #MEASURED_ON}
     */
    public static boolean measuredOn(Platform platform) {
        return MEASURED_ON.contains(platform.id());
    }

    /** What {@link EngineReport#autoNote()} says on a platform auto's rule was not measured on. */
    static String notMeasuredNote(Platform platform) {
        return "auto's rule is not measured on " + platform.id() + ": run `sealpipe speed` here to compare the engines,"
                + " and force one with " + EngineSettings.ENGINE + " / " + EngineSettings.ENGINE + ".OP";
    }

    /**
     * Applies the rule to probed facts on this JVM's {@link Platform#current() platform}; probes
     * nothing else.
     *
     * @param settings the forced engine, the OpenSSL requirement and the libcrypto path
     * @param cpu the CPU's features (auto takes an OpenSSL engine only with hardware AES)
     * @param statuses each engine's availability; one entry per {@link EngineKind}
     * @param opensslVersion OpenSSL's version string, for the report
     * @param opensslPath the libcrypto file, for the report
     * @return the report; its {@code chosen} is empty when no engine may be used, and its
     *     {@code decision} then says why
     */
    public static EngineReport select(EngineSettings settings, CpuFeatures cpu, List<EngineStatus> statuses,
            Optional<String> opensslVersion, Optional<String> opensslPath) {
        return select(settings, cpu, new JavaRuntime(Runtime.version().feature(), "unknown", OptionalInt.empty()),
                statuses, opensslVersion, opensslPath);
    }

    /**
     * Applies the rule to probed facts, including the JVM's, on this JVM's
     * {@link Platform#current() platform}; probes nothing else.
     *
     * @param settings the forced engines, the OpenSSL requirement and the libcrypto path
     * @param cpu the CPU's features
     * @param jvm the JVM's AES intrinsics
     * @param statuses each engine's availability; one entry per {@link EngineKind} (accp may be
     *     missing: it then counts as unavailable)
     * @param opensslVersion OpenSSL's version string
     * @param opensslPath the libcrypto file, for the report
     * @return the report, with the engine of each operation
     */
    public static EngineReport select(EngineSettings settings, CpuFeatures cpu, JavaRuntime jvm,
            List<EngineStatus> statuses, Optional<String> opensslVersion, Optional<String> opensslPath) {
        return select(settings, cpu, jvm, Platform.current(), statuses, opensslVersion, opensslPath);
    }

    /**
     * Applies the rule to probed facts, including the JVM's and the platform's; probes nothing.
     *
     * @param settings the forced engines, the OpenSSL requirement and the libcrypto path
     * @param cpu the CPU's features
     * @param jvm the JVM's AES intrinsics
     * @param platform where the JVM runs: decides whether the report says the rule is unmeasured
     * @param statuses each engine's availability; one entry per {@link EngineKind} (accp may be
     *     missing: it then counts as unavailable)
     * @param opensslVersion OpenSSL's version string
     * @param opensslPath the libcrypto file, for the report
     * @return the report, with the engine of each operation
     */
    public static EngineReport select(EngineSettings settings, CpuFeatures cpu, JavaRuntime jvm, Platform platform,
            List<EngineStatus> statuses, Optional<String> opensslVersion, Optional<String> opensslPath) {
        Map<EngineKind, EngineStatus> byKind = new EnumMap<>(EngineKind.class);
        statuses.forEach(s -> byKind.put(s.kind(), s));
        byKind.putIfAbsent(EngineKind.ACCP, EngineStatus.unavailable(EngineKind.ACCP, "not probed", null));
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
                        + (forced.isOpenSsl() && !cpu.aesni()
                                ? " (note: no " + cpu.aesName() + ", OpenSSL runs without it)" : "");
            }
        } else {
            for (EngineKind kind : PREFERENCE) {
                EngineStatus status = byKind.get(kind);
                if (chosen != null) {
                    notChosen.put(kind, status.available() ? chosen.id() + " is preferred" : status.reason());
                } else if (!status.available()) {
                    notChosen.put(kind, status.reason());
                } else if (kind.isOpenSsl() && !cpu.aesni()) {
                    notChosen.put(kind, (cpu.known() || cpu.aesniSimulatedOff() ? "no " + cpu.aesName() + " on this CPU"
                            : cpu.aesName() + " not detected (this CPU's features could not be read)")
                            + (cpu.aesniSimulatedOff() ? " (simulated by " + EngineSettings.CPU_AESNI + "=false)" : "")
                            + ": auto uses OpenSSL only with " + cpu.aesName());
                } else {
                    chosen = kind;
                }
            }
            if (chosen == null) {
                decision = "no engine is available";
            } else if (chosen.isOpenSsl()) {
                decision = "auto: " + byKind.get(chosen).reason() + ", " + cpu.aesName() + " present";
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
        if (!byKind.get(EngineKind.ACCP).available()) {
            notChosen.put(EngineKind.ACCP, byKind.get(EngineKind.ACCP).reason());
        } else if (chosen != EngineKind.ACCP) {
            notChosen.putIfAbsent(EngineKind.ACCP, "accp runs only the operations it is chosen for (see operations)");
        }
        Map<Operation, OperationChoice> operations = new EnumMap<>(Operation.class);
        EngineKind base = autoBase(cpu, byKind);
        for (Operation op : Operation.values()) {
            operations.put(op, choose(op, settings, cpu, jvm, byKind, chosen, base, decision, opensslVersion));
        }
        return new EngineReport(cpu, jvm, opensslVersion, opensslPath, List.copyOf(statuses), Optional.ofNullable(chosen),
                decision, notChosen, operations, settings, platform);
    }

    /** The engine auto would choose for everything, whatever is forced: what an operation falls back to. */
    private static EngineKind autoBase(CpuFeatures cpu, Map<EngineKind, EngineStatus> byKind) {
        for (EngineKind kind : PREFERENCE) {
            if (byKind.get(kind).available() && (!kind.isOpenSsl() || cpu.aesni())) {
                return kind;
            }
        }
        return null;
    }

    private static OperationChoice choose(Operation op, EngineSettings settings, CpuFeatures cpu, JavaRuntime jvm,
            Map<EngineKind, EngineStatus> byKind, EngineKind chosen, EngineKind base, String decision,
            Optional<String> opensslVersion) {
        EngineKind forcedForOp = settings.operations().get(op);
        if (forcedForOp != null) {
            String property = EngineSettings.engineFor(op) + "=" + forcedForOp.id();
            EngineStatus status = byKind.get(forcedForOp);
            if (!status.available()) {
                return new OperationChoice(op, Optional.empty(), property + " but " + forcedForOp.id()
                        + " is unavailable: " + status.reason(), Optional.empty());
            }
            return new OperationChoice(op, Optional.of(forcedForOp), "forced by " + property, Optional.empty());
        }
        if (chosen == null) {
            return new OperationChoice(op, Optional.empty(), decision, Optional.empty());
        }
        if (settings.engine().isPresent()) {
            if (chosen.supports(op)) {
                return new OperationChoice(op, Optional.of(chosen), decision, Optional.empty());
            }
            String lacks = chosen.id() + " has no " + op.id();
            return base == null
                    ? new OperationChoice(op, Optional.empty(), lacks + " and no other engine is available", Optional.empty())
                    : new OperationChoice(op, Optional.of(base), lacks + ": auto's engine runs it", Optional.empty());
        }
        if (settings.requireOpenSsl()) {
            return new OperationChoice(op, Optional.of(chosen), EngineSettings.REQUIRE + "=openssl keeps every"
                    + " operation on OpenSSL", Optional.empty());
        }
        Optional<EngineKind> until = settings.warmup() ? Optional.of(chosen) : Optional.empty();
        boolean jce = byKind.get(EngineKind.JCE).available() && chosen.isOpenSsl();
        boolean accp = byKind.get(EngineKind.ACCP).available() && !jvm.checkJni();
        String why;
        String x86Only = "the moves to jce are rules for HotSpot's x86 AVX-512 intrinsics, not for " + cpu.arch();
        switch (op) {
            case CTR -> {
                if (jce && jvm.avx512AesCtr(cpu)) {
                    return new OperationChoice(op, Optional.of(EngineKind.JCE), "HotSpot's AVX-512 VAES AES-CTR"
                            + " intrinsic (" + jvm + "); OpenSSL's AES-CTR has no VAES code", until);
                }
                why = !Platform.isX86(cpu.arch()) ? x86Only
                        : jvm.avx512AesCtr(cpu) ? "" : "no AVX-512 AES-CTR intrinsic in this JVM on this CPU";
            }
            case GCM_SEAL, GCM_OPEN -> {
                if (accp) {
                    return new OperationChoice(op, Optional.of(EngineKind.ACCP), "AWS-LC's AES-GCM (accp is on the"
                            + " class path)", until);
                }
                boolean oldOpenSsl = opensslBefore(opensslVersion, 3, 1);
                if (op == Operation.GCM_SEAL && jce && jvm.avx512AesGcm(cpu) && oldOpenSsl) {
                    return new OperationChoice(op, Optional.of(EngineKind.JCE), "HotSpot's AVX-512 AES-GCM intrinsic ("
                            + jvm + "); OpenSSL before 3.1 has no AVX-512 AES-GCM", until);
                }
                String noAccp = byKind.get(EngineKind.ACCP).available() && jvm.checkJni() ? "; accp is not used under"
                        + " -Xcheck:jni: the JVM then gives native code copies of arrays, which accp writes back whole,"
                        + " so parallel streams would lose chunks" : "";
                why = (op == Operation.GCM_OPEN ? "SunJCE buffers whole GCM decryptions"
                        : !Platform.isX86(cpu.arch()) ? x86Only
                        : !jvm.avx512AesGcm(cpu) ? "no AVX-512 AES-GCM intrinsic in this JVM on this CPU"
                        : !oldOpenSsl ? "OpenSSL 3.1 and later have AVX-512 AES-GCM too" : "") + noAccp;
                why = why.startsWith("; ") ? why.substring(2) : why;
            }
            default -> why = "";
        }
        return new OperationChoice(op, Optional.of(chosen), "auto's engine" + (why.isEmpty() ? "" : " (" + why + ")"),
                Optional.empty());
    }

    private static final Pattern OPENSSL_VERSION = Pattern.compile("OpenSSL (\\d+)\\.(\\d+)");

    /** Whether the version string names an OpenSSL older than major.minor; false if it cannot tell. */
    static boolean opensslBefore(Optional<String> version, int major, int minor) {
        Matcher m = OPENSSL_VERSION.matcher(version.orElse(""));
        if (!m.find()) {
            return false;
        }
        int ma = Integer.parseInt(m.group(1));
        int mi = Integer.parseInt(m.group(2));
        return ma < major || (ma == major && mi < minor);
    }

    private static boolean openSslUnavailable(Map<EngineKind, EngineStatus> byKind) {
        return PREFERENCE.stream().filter(EngineKind::isOpenSsl).noneMatch(k -> byKind.get(k).available());
    }
}
