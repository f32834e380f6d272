package io.sealpipe.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.Envelope;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sealpipe inspect FILE}: what a file is, from its length alone and, given a key, from its
 * header and final chunk: whether it is a chunked AES-GCM message (c2sp.org/chunked-encryption),
 * its plaintext length and chunk count, which key version wrote it, whether it ends properly,
 * whether its plaintext is Snappy-compressed. It reads the header and the final chunk, never the
 * whole file, and prints no plaintext.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Tell what FILE is: a chunked AES-GCM file (sealpipe's gcm mode, c2sp.org/chunked-encryption)"
                + " or not, its stored and plaintext length and chunks; with a key, which key version wrote it and"
                + " whether it ends properly (its final chunk authenticates). CTR files have no header and cannot be"
                + " recognised."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:inspected (and, with a key, a version matches and the file ends properly)",
            "1:the file cannot be read, no key version matches, or the file does not end properly",
            "2:bad arguments"})
final class InspectCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The file to inspect.")
    Path file;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    CipherOptions.KeySource key;

    @Option(names = "--password-file", paramLabel = "FILE", description = "With --keystore: a file whose first line is"
            + " the keystore's password (else " + KeystorePassword.ENV + ", else a prompt on the terminal).")
    Path passwordFile;

    @Option(names = "--context-hex", paramLabel = "HEX", description = "The context the file was written with, as hex"
            + " (default: none).")
    String contextHex;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        byte[] context = contextHex == null ? new byte[0] : KeySources.parseHex("--context-hex", contextHex, spec);
        List<CipherOptions.KeyVersion> versions = key == null ? List.of() : KeySources.versions(key, passwordFile, spec);
        if (key != null && key.hex != null) {
            spec.commandLine().getErr().println("sealpipe: warning: --key-hex shows the key to every user of this machine"
                    + " (ps, /proc/PID/cmdline): use --key-file (raw bytes or hex)");
        }
        try {
            if (!Files.isRegularFile(file)) {
                throw new IOException("cannot inspect " + file + ": " + (Files.isDirectory(file) ? "it is a directory"
                        : "no such file"));
            }
            Map<String, Object> report = new LinkedHashMap<>();
            boolean ok = inspect(versions, context, report);
            print(report);
            return ok ? Main.OK : Main.FAILED;
        } finally {
            versions.forEach(CipherOptions.KeyVersion::wipe);
        }
    }

    /** Fills {@code report}; false if a key was given and no version matches or the end is wrong. */
    private boolean inspect(List<CipherOptions.KeyVersion> versions, byte[] context, Map<String, Object> report)
            throws IOException {
        long stored = Files.size(file);
        long plain = GcmStreams.plaintextLength(stored);
        report.put("file", file.toString());
        report.put("stored_length", stored);
        byte[] first;
        try (InputStream in = Files.newInputStream(file)) {
            first = in.readNBytes(Envelope.LENGTH);
        }
        if (Envelope.startsWithMagic(first)) {
            return inspectEnvelope(first, stored, report);
        }
        if (plain < 0) {
            report.put("format", "unrecognised");
            report.put("note", "no chunked AES-GCM message is " + stored + " bytes long, so this is not a gcm file (or"
                    + " it was cut short); CTR files have no header and cannot be recognised");
            return versions.isEmpty();
        }
        report.put("format", versions.isEmpty() ? "gcm-length" : "gcm");
        report.put("plaintext_length", plain);
        report.put("chunks", (stored - GcmStreams.HEADER_LENGTH) / (16384 + 16) + 1);
        if (versions.isEmpty()) {
            report.put("note", "its length fits a chunked AES-GCM message (but a CTR file or other data can have such a"
                    + " length too); give a key to check its header and its end");
            return true;
        }
        byte[] header = new byte[GcmStreams.HEADER_LENGTH];
        try (InputStream in = Files.newInputStream(file)) {
            if (in.readNBytes(header, 0, header.length) != header.length) {
                throw new IOException("cannot read the header of " + file);
            }
        }
        for (CipherOptions.KeyVersion version : versions) {
            GcmStreams streams = GcmStreams.builder().key(version.key()).context(context).build();
            try {
                if (!streams.matchesHeader(header)) {
                    continue;
                }
                report.put("variant", streams.formatName());
                report.put("key_matches", true);
                if (!(versions.size() == 1 && version.name().equals("the key"))) {
                    report.put("key_version", version.name()); // a named version (keystore entry, provider)
                }
                try (GcmSeekableChannel channel = streams.open(FileChannel.open(file, StandardOpenOption.READ))) {
                    try {
                        channel.size(); // decrypts and verifies the final chunk
                        report.put("ends_properly", true);
                    } catch (StreamAuthenticationException e) {
                        report.put("ends_properly", false);
                        report.put("note", "its final chunk does not authenticate (" + e.getMessage() + "): it was cut"
                                + " short or changed");
                        return false;
                    }
                    try {
                        byte[] start = new byte[(int) Math.min(SnappyGuard.STREAM_IDENTIFIER.length, plain)];
                        channel.readFully(0, start, 0, start.length);
                        report.put("compressed", Arrays.equals(start, SnappyGuard.STREAM_IDENTIFIER) ? "snappy" : "none");
                        return true;
                    } catch (StreamAuthenticationException e) {
                        report.put("note", "its first chunk does not authenticate (" + e.getMessage() + "): it was"
                                + " changed; only a full decrypt checks every chunk");
                        return false;
                    }
                }
            } finally {
                streams.destroy();
            }
        }
        report.put("key_matches", false);
        report.put("note", "no version of the key matches its key commitment (tried " + versions.stream()
                .map(CipherOptions.KeyVersion::name).collect(Collectors.joining(", ")) + "): it was written under another"
                + " key or context, or it is not a gcm file");
        return false;
    }

    /**
     * An envelope file of the sealed file system (docs/FORMAT.md, "Envelope files"): what its
     * envelope says, read with no KMS call; false if the envelope is cut short or unreadable.
     */
    private static boolean inspectEnvelope(byte[] first, long stored, Map<String, Object> report) {
        Envelope envelope;
        try {
            envelope = Envelope.parse(first);
        } catch (IOException e) {
            report.put("format", "sealed-envelope");
            report.put("note", "it begins with an envelope that cannot be read: " + e.getMessage());
            return false;
        }
        long plain = GcmStreams.plaintextLength(stored - Envelope.LENGTH);
        report.put("format", "sealed-envelope");
        report.put("envelope_version", Envelope.VERSION);
        report.put("kms_kind", switch (envelope.kind()) {
            case Envelope.KIND_HADOOP -> "hadoop-key-provider";
            case Envelope.KIND_AWS -> "aws-kms";
            default -> "kind-" + envelope.kind();
        });
        report.put("key_name", envelope.keyName());
        report.put("key_version", envelope.versionName());
        if (envelope.kind() == Envelope.KIND_AWS) {
            report.put("key_arn", envelope.versionName());
            report.put("encryption_context", new java.util.TreeMap<>(Envelope.awsEncryptionContext(envelope.keyName())));
        }
        report.put("compressed", envelope.compressed() ? "snappy" : "none");
        if (plain < 0) {
            report.put("note", "no envelope file is " + stored + " bytes long: it was cut short or is still being written");
            return false;
        }
        report.put(envelope.compressed() ? "message_plaintext_length" : "plaintext_length", plain);
        report.put("chunks", (stored - Envelope.LENGTH - GcmStreams.HEADER_LENGTH) / (16384 + 16) + 1);
        report.put("note", "a sealed file under a data key that the KMS wraps (sealpipe.fs.key.mode=envelope): read it"
                + " through the sealed file system; nothing here asked the KMS");
        return true;
    }

    private void print(Map<String, Object> report) throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
            return;
        }
        for (Map.Entry<String, Object> e : report.entrySet()) {
            String value = e.getValue() == null ? "none matches" : e.getValue().toString();
            if (e.getKey().endsWith("length")) {
                value += " bytes";
            }
            out.printf("%-17s %s%n", e.getKey().replace('_', ' ') + ":", value);
        }
    }
}
