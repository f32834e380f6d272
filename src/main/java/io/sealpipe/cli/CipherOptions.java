package io.sealpipe.cli;

import io.sealpipe.Parallelism;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineSettings;
import io.sealpipe.engine.Engines;
import io.sealpipe.engine.Operation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The options {@code encrypt} and {@code decrypt} share, validated into key, IV or context, and
 * engine. Each check throws a {@link UsageException} (exit 2) naming the option and never its
 * value: the value may be a key typed in the wrong place.
 */
final class CipherOptions {

    enum Mode {
        /** c2sp.org/chunked-encryption (Cobblestone-128/256): authenticated, with a 56-byte header. */
        gcm,
        /** Hadoop's AES-CTR: no header, no integrity; needs an IV. */
        ctr;
    }

    enum Compression {
        /** No compression. */
        none,
        /** The Snappy framing format (x-snappy-framed), compressed before encryption. */
        snappy;
    }

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--mode", defaultValue = "gcm", description = "Stream format: gcm (default; authenticated chunked "
            + "AES-GCM, c2sp.org/chunked-encryption) or ctr (AES-CTR, byte-compatible with Hadoop and Commons Crypto;"
            + " no integrity).")
    Mode mode;

    @Option(names = "--aes", defaultValue = "256", paramLabel = "BITS",
            description = "Key size: 128 or 256 (default: ${DEFAULT-VALUE}); the key must be that long.")
    int aesBits;

    static final class KeySource {
        @Option(names = "--key-hex", paramLabel = "HEX", description = "The key as hex digits. Every user of this"
                + " machine can read it in the process list: prefer --key-file.")
        String hex;

        @Option(names = "--key-file", paramLabel = "PATH", description = "A file holding the key: 16 or 32 raw bytes, or"
                + " 32 or 64 hex digits (a trailing newline is fine), e.g. from sealpipe keygen --out PATH.")
        Path file;

        @Option(names = "--key-env", paramLabel = "VAR", description = "An environment variable holding the key as 32 or"
                + " 64 hex digits (nothing else: a passphrase is refused).")
        String env;

        @ArgGroup(exclusive = false)
        KeystoreEntry keystore;

        @ArgGroup(exclusive = false)
        ProviderKey provider;
    }

    /** A key of a Hadoop KeyProvider, with its versions. */
    static final class ProviderKey {
        @Option(names = "--key-provider", paramLabel = "URI", description = "A Hadoop key provider:"
                + " a JCEKS file, jceks://file/PATH or localjceks://file/PATH (password from --password-file,"
                + " HADOOP_KEYSTORE_PASSWORD, or Hadoop's default), or a KMS, kms://http@HOST:PORT/kms (or any provider"
                + " Hadoop knows), which needs Hadoop's client on the class path: $(hadoop classpath).")
        String uri;

        @Option(names = "--key-name", required = true, paramLabel = "NAME", description = "The key's name in the provider.")
        String name;

        @Option(names = "--key-mode", paramLabel = "MODE", defaultValue = "direct", description = "direct (default): the"
                + " key's own material encrypts (the provider must hand it out); envelope: a data key that the provider"
                + " generates and wraps (a KMS's GENERATE_EEK and DECRYPT_EEK: its key never leaves it), stored wrapped"
                + " in a 512-byte envelope before the message, as the sealed file system's envelope mode writes files."
                + " decrypt reads an envelope file (OUT a file) without it.")
        String mode;

        @ArgGroup(exclusive = false)
        KmsOptions kms;

        /** The KMS these options name, checked. */
        HadoopEnvelopes.Kms kms(picocli.CommandLine commandLine) {
            return KmsOptions.kms(kms, uri, commandLine);
        }
    }

    /** A secret-key entry of a PKCS12 or JCEKS keystore. */
    static final class KeystoreEntry {
        @Option(names = "--keystore", required = true, paramLabel = "FILE", description = "A PKCS12 (.p12) or JCEKS"
                + " keystore holding the key as a secret-key entry (with --key-alias); its password from"
                + " --password-file, " + KeystorePassword.ENV + " or a prompt.")
        Path file;

        @Option(names = "--key-alias", required = true, paramLabel = "ALIAS", description = "The keystore entry's alias.")
        String alias;
    }

    @Option(names = "--password-file", paramLabel = "FILE", description = "With --keystore: a file whose first line is"
            + " the keystore's password (else " + KeystorePassword.ENV + ", else a prompt on the terminal).")
    Path passwordFile;

    @ArgGroup(exclusive = true, multiplicity = "1")
    KeySource key;

    @Option(names = "--iv-hex", paramLabel = "HEX",
            description = "ctr only, and required there: the 16-byte IV (initial counter block) as hex.")
    String ivHex;

    @Option(names = "--context-hex", paramLabel = "HEX", description = "gcm only: bytes bound into the key derivation, as"
            + " hex (default: none). Not stored in the output: decrypt needs the same context.")
    String contextHex;

    @Option(names = "--engine", paramLabel = "E", defaultValue = "auto",
            description = "auto, openssl-jni, openssl-jna, jce or accp (gcm only) (default: ${DEFAULT-VALUE}).")
    String engine;

    @Option(names = "--compress", paramLabel = "ALGO", defaultValue = "none",
            description = "none (default) or snappy: compress before encrypting (decrypt: decompress after decrypting),"
                    + " in the standard Snappy framing format. Compression reveals the compressed length: do not put"
                    + " secrets and attacker-chosen data in one stream.")
    Compression compress;

    /**
     * The default of --threads: the available processors, at most 8. The CLI's own, not the
     * library's {@link Parallelism#DEFAULT}: a library shares the cores with its application and
     * may default to less, while a command-line run is the job itself.
     */
    static final int DEFAULT_THREADS = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), 8));

    @Option(names = "--threads", paramLabel = "N", description = "Threads working on the stream: 1.."
            + Parallelism.MAX + " (default: one per available processor, at most 8). The output is the same for every N.")
    Integer threads;

    @Option(names = {"-q", "--quiet"}, description = "No progress bar (shown on a terminal for input files over 4 MB).")
    boolean quiet;

    @Option(names = "--force", description = "Replace an existing OUT (it keeps its permissions); without it an"
            + " existing OUT is an error, also one made while the command runs.")
    boolean force;

    /**
     * An existing OUT (a file, or any name but a directory's, which is refused later) is replaced
     * only with --force. Checked again when OUT is published: one made meanwhile is kept too.
     */
    void checkOutMayBeWritten() {
        if (!Io.isStd(out) && !force && Files.exists(Path.of(out), LinkOption.NOFOLLOW_LINKS)
                && !Files.isDirectory(Path.of(out))) {
            throw bad("OUT exists: add --force to replace it (it keeps its permissions), or choose another name");
        }
    }

    @Parameters(index = "0", arity = "0..1", paramLabel = "IN", description = "Input file (default or -: standard input).")
    String in;

    @Parameters(index = "1", arity = "0..1", paramLabel = "OUT", description = "Output file (default or -: standard output).")
    String out;

    private UsageException bad(String message) {
        return new UsageException(spec.commandLine(), message);
    }

    /** Rejects options that belong to the other mode, before anything else is checked or read. */
    void checkModeOptions() {
        if (mode == Mode.gcm && ivHex != null) {
            throw bad("--iv-hex is for --mode ctr only: gcm derives a fresh key and nonce for every message from a"
                    + " random salt (gcm is the default mode; add --mode ctr for the Hadoop CTR format)");
        }
        if (mode == Mode.ctr && contextHex != null) {
            throw bad("--context-hex is for --mode gcm only: the ctr format has no context");
        }
    }

    /**
     * Rejects an OUT that is IN itself (the same path, {@code ./x} for {@code x}, a hard or symbolic
     * link): the output would be renamed over the input, and {@code encrypt x x} would leave only
     * the ciphertext, {@code decrypt x x} only the plaintext.
     */
    void checkInIsNotOut() {
        checkPath("IN", in);
        checkPath("OUT", out);
        if (Io.isSameFile(in, out)) {
            throw bad("IN and OUT are the same file: write to another file, then rename it if you must");
        }
    }

    /** A file name the system cannot take (a NUL character) is a usage error that does not repeat it. */
    private void checkPath(String name, String path) {
        if (Io.isStd(path)) {
            return;
        }
        try {
            Path.of(path);
        } catch (InvalidPathException e) {
            throw bad(name + " is not a usable file name: " + e.getReason());
        }
    }

    /** Whether the key came on the command line, where every local user can read it. */
    boolean keyOnCommandLine() {
        return key.hex != null;
    }

    /** A key and the name of its version ("the key" when there is only one). */
    record KeyVersion(String name, byte[] key) {
        void wipe() {
            Arrays.fill(key, (byte) 0);
        }
    }

    /**
     * The key, or with --keystore every version of it (the entry ALIAS and Hadoop's ALIAS@N
     * entries), oldest first, checked against --aes; the caller wipes them.
     *
     * @throws IOException if a keystore cannot be read or opened (exit 1)
     */
    java.util.List<KeyVersion> keyVersions() throws IOException {
        if (aesBits != 128 && aesBits != 256) {
            throw bad(mode == Mode.gcm
                    ? "--mode gcm takes --aes 128 or 256 (Cobblestone-128 or -256)"
                    : "--aes must be 128 or 256");
        }
        java.util.List<KeyVersion> versions = KeySources.versions(key, passwordFile, spec);
        KeyVersion newest = versions.get(versions.size() - 1);
        if (newest.key().length != aesBits / 8) {
            int n = newest.key().length;
            versions.forEach(KeyVersion::wipe);
            throw bad(lengthMessage(n));
        }
        java.util.List<KeyVersion> usable = new java.util.ArrayList<>();
        for (KeyVersion v : versions) {
            if (v.key().length == aesBits / 8) {
                usable.add(v);
            } else {
                v.wipe(); // an older version of another size cannot have written this mode and size
            }
        }
        return usable;
    }

    private String lengthMessage(int n) {
        boolean defaulted = !spec.commandLine().getParseResult().hasMatchedOption("--aes");
        return "the key is " + n + " bytes but --aes " + aesBits + " needs " + aesBits / 8
                + (defaulted && n == 16 ? " (--aes 256 is the default: add --aes 128 for a 16-byte key)" : "");
    }

    byte[] iv() {
        if (ivHex == null) {
            throw bad("--iv-hex is required for --mode ctr (16 bytes as 32 hex digits)");
        }
        byte[] iv = parseHex("--iv-hex", ivHex);
        if (iv.length != 16) {
            throw bad("--iv-hex must be 16 bytes (32 hex digits), not " + iv.length);
        }
        return iv;
    }

    /** The parallelism of --threads, or {@link #DEFAULT_THREADS}. */
    int threads() {
        if (threads == null) {
            return DEFAULT_THREADS;
        }
        if (threads < 1 || threads > Parallelism.MAX) {
            throw bad("--threads must be 1.." + Parallelism.MAX);
        }
        return threads;
    }

    /** The gcm context: the bytes of --context-hex, or none. */
    byte[] context() {
        return contextHex == null ? new byte[0] : parseHex("--context-hex", contextHex);
    }

    CryptoEngine engine() {
        Optional<EngineKind> kind;
        try {
            kind = EngineSettings.parseEngine(engine);
        } catch (IllegalArgumentException e) {
            throw bad("--engine takes auto, " + Arrays.stream(EngineKind.values()).map(EngineKind::id)
                    .collect(Collectors.joining(", ")).replaceFirst(", ([^,]+)$", " or $1"));
        }
        if (mode == Mode.ctr && kind.isPresent() && !kind.get().supports(Operation.CTR)) {
            throw bad("--engine " + kind.get().id() + " has no ctr: use --mode gcm, or auto or "
                    + Arrays.stream(EngineKind.values()).filter(k -> k.supports(Operation.CTR)).map(EngineKind::id)
                            .collect(Collectors.joining(", ")));
        }
        return Engines.forName(engine.toLowerCase(Locale.ROOT));
    }

    private byte[] parseHex(String option, String value) {
        try {
            return HexFormat.of().parseHex(value.trim());
        } catch (IllegalArgumentException e) {
            throw bad(option + " is not hex: expected pairs of the digits 0-9 and a-f");
        }
    }
}
