package io.sealpipe.cli;

import io.sealpipe.Abortable;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.snappy.SnappyStreams;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.PushbackInputStream;
import java.nio.file.FileAlreadyExistsException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code sealpipe encrypt} and {@code sealpipe decrypt}: one file or pipe through a stream, in
 * the gcm format (the default) or Hadoop's ctr format.
 */
abstract class CryptCommand implements Callable<Integer> {

    @Mixin
    CipherOptions options;

    abstract boolean encrypting();

    /** decrypt --raw: write the plaintext even if it looks compressed. */
    boolean raw() {
        return false;
    }

    /** One stream format with its key: the layer that encrypt or decrypt puts over the data. */
    record Codec(Function<OutputStream, OutputStream> encrypt, Function<InputStream, InputStream> decrypt,
            Runnable destroy) {
        static Codec of(GcmStreams gcm) {
            return new Codec(gcm::encrypt, gcm::decrypt, gcm::destroy);
        }

        static Codec of(CtrStreams ctr) {
            return new Codec(ctr::encrypt, ctr::decrypt, ctr::destroy);
        }

        /** This codec with its plaintext checked by {@link SnappyGuard}: a compressed one is refused. */
        Codec refusingCompressed() {
            return new Codec(encrypt, in -> new SnappyGuard(decrypt.apply(in)), destroy);
        }

        /** This codec with compression over it: compress, then encrypt; decrypt, then decompress. */
        Codec compressedWith(SnappyStreams snappy) {
            return new Codec(out -> snappy.compress(encrypt.apply(out)), in -> snappy.decompress(decrypt.apply(in)),
                    destroy);
        }
    }

    @Override
    public Integer call() throws IOException {
        options.checkModeOptions();
        options.checkInIsNotOut();
        options.checkOutMayBeWritten();
        if (raw() && options.compress != CipherOptions.Compression.none) {
            throw new UsageException(options.spec.commandLine(), "--raw is for decrypting without --compress");
        }
        int threads = options.threads();
        byte[] context = options.mode == CipherOptions.Mode.gcm ? options.context() : null;
        CryptoEngine engine = options.engine();
        boolean envelope = envelope();
        List<CipherOptions.KeyVersion> versions = envelope ? List.of() : options.keyVersions();
        Codec codec = null;
        byte[] envelopeBytes = null; // encrypt --key-mode envelope: written before the message
        try {
            if (envelope && encrypting()) {
                HadoopEnvelopes.DataKey dataKey = HadoopEnvelopes.generate(kms(), options.key.provider.name,
                        options.compress == CipherOptions.Compression.snappy);
                try {
                    envelopeBytes = dataKey.envelope().bytes();
                    codec = codec(dataKey.key(), dataKey.envelope().context(), engine, threads);
                } finally {
                    java.util.Arrays.fill(dataKey.key(), (byte) 0);
                }
            } else if (envelope) {
                // decrypt: the key comes from the input's envelope, below
            } else if (encrypting() || versions.size() == 1) {
                codec = codec(versions.get(versions.size() - 1).key(), context, engine, threads); // the newest
            } else if (options.mode == CipherOptions.Mode.ctr) {
                throw new UsageException(options.spec.commandLine(), "ctr files carry no key commitment to find their key"
                        + " version by: give the one version that wrote the file (--keystore with --key-alias NAME@N,"
                        + " or --key-file)");
            }
            if (options.keyOnCommandLine()) {
                // Still accepted (scripts use it), once the arguments are known to be good.
                options.spec.commandLine().getErr().println("sealpipe: warning: --key-hex shows the key to every user of"
                        + " this machine (ps, /proc/PID/cmdline): use --key-file (raw bytes or hex)");
            }
            try (InputStream opened = open(options.in);
                    Io.Output output = create(options.out, options.spec.commandLine().getErr(), options.force);
                    InputStream progress = Progress.wrap(opened, options.in, encrypting() ? "encrypt" : "decrypt",
                            options.quiet)) {
                InputStream rawIn = progress;
                if (envelope && !encrypting()) {
                    codec = envelopeCodec(rawIn, engine, threads);
                } else if (codec == null) {
                    // Several key versions: the one whose commitment matches the header.
                    PushbackInputStream peek = new PushbackInputStream(rawIn, GcmStreams.HEADER_LENGTH);
                    byte[] header = peek.readNBytes(GcmStreams.HEADER_LENGTH);
                    peek.unread(header);
                    rawIn = peek;
                    codec = codec(matching(versions, header, context), context, engine, threads);
                }
                Io.Counting sink = new Io.Counting(output.stream);
                if (envelopeBytes != null) {
                    sink.write(envelopeBytes);
                }
                try {
                    transfer(rawIn, sink, codec, encrypting());
                } catch (StreamAuthenticationException | SnappyGuard.CompressedException e) {
                    // The stream released only authenticated plaintext, all of it before the failure
                    // (and none of a compressed one).
                    String where = !Io.isStd(options.out) ? options.out + " was left untouched"
                            : sink.written() == 0 ? "nothing went to standard output"
                            : "standard output got only the " + sink.written() + " authenticated bytes before it";
                    throw new IOException("cannot decrypt " + (Io.isStd(options.in) ? "standard input" : options.in) + ": "
                            + e.getMessage() + "; " + where, e);
                }
                try {
                    output.commit();
                } catch (FileAlreadyExistsException e) {
                    // Made after checkOutMayBeWritten (by another program): never replaced without --force.
                    throw new UsageException(options.spec.commandLine(), "OUT exists (it was made while "
                            + options.spec.commandLine().getCommandName() + " ran): add --force to replace it, or"
                            + " choose another name; OUT was left as it is");
                }
            }
        } finally {
            versions.forEach(CipherOptions.KeyVersion::wipe);
            if (codec != null) {
                codec.destroy().run();
            }
        }
        return Main.OK;
    }

    /**
     * Whether this run uses a data key wrapped by a KMS (--key-provider, --kms aws): encrypt with {@code
     * --key-mode envelope}; decrypt with it, or of an input file that begins with an envelope.
     */
    private boolean envelope() throws IOException {
        CipherOptions.ProviderKey provider = options.key.provider;
        String mode = provider == null ? "direct" : provider.mode;
        if (!mode.equals("direct") && !mode.equals("envelope")) {
            throw new UsageException(options.spec.commandLine(), "--key-mode must be direct or envelope");
        }
        boolean envelope = mode.equals("envelope");
        if (provider != null) {
            provider.kms(options.spec.commandLine()); // usage errors first
        }
        if (!envelope && provider != null && !encrypting() && !Io.isStd(options.in)) {
            try (InputStream in = java.nio.file.Files.newInputStream(java.nio.file.Path.of(options.in))) {
                envelope = io.sealpipe.internal.Envelope.startsWithMagic(in.readNBytes(8));
            } catch (IOException e) {
                return false; // opening the input fails below, as for any file
            }
        }
        if (!envelope) {
            return false;
        }
        if (options.mode != CipherOptions.Mode.gcm || options.contextHex != null || options.aesBits != 256) {
            throw new UsageException(options.spec.commandLine(), "an envelope file is gcm with a 256-bit data key and"
                    + " the envelope as its context: --mode ctr, --aes 128 and --context-hex do not apply");
        }
        if (!HadoopProviderKeys.available()) {
            throw new IOException("envelope files need Hadoop's client on the class path, which the CLI jar does not"
                    + " hold: SEALPIPE_CLASSPATH=\"$(hadoop classpath)\" ./sealpipe ...");
        }
        return true;
    }

    /** The KMS of {@code --kms} and {@code --key-provider}, checked. */
    private HadoopEnvelopes.Kms kms() {
        return options.key.provider.kms(options.spec.commandLine());
    }

    /**
     * Reads the envelope at the start of {@code in}, has the --key-provider unwrap its data key
     * and returns the codec that decrypts the rest (compressed if the envelope says so).
     */
    private Codec envelopeCodec(InputStream in, CryptoEngine engine, int threads) throws IOException {
        String input = Io.isStd(options.in) ? "standard input" : options.in;
        io.sealpipe.internal.Envelope envelope;
        try {
            envelope = io.sealpipe.internal.Envelope.parse(in.readNBytes(io.sealpipe.internal.Envelope.LENGTH));
        } catch (IOException e) {
            throw new IOException("cannot decrypt " + input + ": " + e.getMessage() + "; nothing was decrypted", e);
        }
        if (!envelope.keyName().equals(options.key.provider.name)) {
            throw new IOException("cannot decrypt " + input + ": its envelope names the key '" + envelope.keyName()
                    + "', not the --key-name; nothing was decrypted");
        }
        byte[] key;
        try {
            key = HadoopEnvelopes.unwrap(kms(), envelope);
        } catch (IOException e) {
            throw new IOException("cannot decrypt " + input + ": " + e.getMessage() + "; nothing was decrypted", e);
        }
        try {
            options.compress = envelope.compressed() ? CipherOptions.Compression.snappy : CipherOptions.Compression.none;
            return codec(key, envelope.context(), engine, threads);
        } finally {
            java.util.Arrays.fill(key, (byte) 0);
        }
    }

    /** The version whose key commitment matches {@code header}, or a failure naming those tried. */
    private byte[] matching(List<CipherOptions.KeyVersion> versions, byte[] header, byte[] context) throws IOException {
        if (header.length == GcmStreams.HEADER_LENGTH) {
            for (CipherOptions.KeyVersion v : versions) {
                GcmStreams streams = GcmStreams.builder().key(v.key()).context(context).build();
                try {
                    if (streams.matchesHeader(header)) {
                        return v.key();
                    }
                } finally {
                    streams.destroy();
                }
            }
        }
        throw new IOException("cannot decrypt " + (Io.isStd(options.in) ? "standard input" : options.in) + ": no version"
                + " of the key matches its key commitment (tried " + versions.stream().map(CipherOptions.KeyVersion::name)
                .collect(Collectors.joining(", ")) + "): it was written under another key or context, or is not a"
                + " sealpipe gcm file; " + (Io.isStd(options.out) ? "nothing went to standard output" : options.out
                + " was left untouched"));
    }

    private Codec codec(byte[] key, byte[] context, CryptoEngine engine, int threads) {
        Codec codec;
        if (options.mode == CipherOptions.Mode.gcm) {
            codec = Codec.of(GcmStreams.builder().key(key).context(context).engine(engine).parallelism(threads).build());
        } else {
            codec = Codec.of(CtrStreams.builder().key(key).iv(options.iv()).engine(engine).parallelism(threads).build());
        }
        if (options.compress == CipherOptions.Compression.snappy) {
            codec = codec.compressedWith(SnappyStreams.builder().parallelism(threads).build());
        } else if (!raw()) {
            codec = codec.refusingCompressed();
        }
        return codec;
    }

    /**
     * Copies {@code rawIn} through the codec into {@code sink}. After a failure the encrypting
     * layers are abandoned, not closed: closing ends the message, and a gcm message cut short by
     * a failed read would then pass as a complete, shorter one.
     */
    static void transfer(InputStream rawIn, Io.Counting sink, Codec codec, boolean encrypting) throws IOException {
        try (InputStream in = encrypting ? rawIn : codec.decrypt().apply(rawIn);
                OutputStream out = encrypting ? codec.encrypt().apply(sink) : sink) {
            try {
                Io.copy(in, out);
            } catch (Throwable t) {
                if (out instanceof Abortable a) {
                    try {
                        a.abort(); // before the try's close() runs, which then does nothing
                    } catch (Throwable x) {
                        t.addSuppressed(x);
                    }
                }
                throw t;
            }
        }
    }

    private static InputStream open(String path) throws IOException {
        try {
            return Io.openInput(path);
        } catch (IOException e) {
            throw new IOException("cannot read input " + path + ": " + Io.describe(e), e);
        }
    }

    private static Io.Output create(String path, PrintWriter err, boolean replace) throws IOException {
        try {
            return Io.Output.open(path, err, replace);
        } catch (IOException e) {
            throw new IOException("cannot write output " + path + ": " + Io.describe(e), e);
        }
    }

    @Command(name = "encrypt", mixinStandardHelpOptions = true,
            description = "Encrypt IN (or standard input) to OUT (or standard output).")
    static final class Encrypt extends CryptCommand {
        @Override
        boolean encrypting() {
            return true;
        }
    }

    @Command(name = "decrypt", mixinStandardHelpOptions = true,
            description = {"Decrypt IN (or standard input) to OUT (or standard output).",
                "gcm: a file OUT appears only if the whole message authenticates; standard output may get the"
                        + " authenticated plaintext before a failed chunk, never anything after it."})
    static final class Decrypt extends CryptCommand {
        @Option(names = "--raw", description = "Write the decrypted bytes as they are, even if they look compressed"
                + " (without it, a plaintext that starts as a Snappy framed stream is refused: add --compress snappy).")
        boolean raw;

        @Override
        boolean encrypting() {
            return false;
        }

        @Override
        boolean raw() {
            return raw;
        }
    }
}
