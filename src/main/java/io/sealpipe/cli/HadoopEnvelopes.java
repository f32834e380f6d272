package io.sealpipe.cli;

import io.sealpipe.AesKey;
import io.sealpipe.hadoop.AwsEnvelopeKms;
import io.sealpipe.hadoop.EnvelopeKms;
import io.sealpipe.hadoop.HadoopEnvelopeKms;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.Envelope;
import io.sealpipe.internal.KeyAccess;
import io.sealpipe.internal.hadoop.EnvelopeWrapping;
import io.sealpipe.internal.hadoop.KmsGeneration;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * Data keys for envelope files ({@code --key-mode envelope}) through the sealed file system's
 * KMS clients ({@link EnvelopeKms}): Hadoop's key provider at {@code --key-provider}, or AWS KMS
 * ({@code --kms aws}). The KMS's key never reaches this process. Needs hadoop-common on the class
 * path ({@link HadoopProviderKeys#available()}), and for AWS KMS the AWS SDK v2 (S3A's bundle).
 */
final class HadoopEnvelopes {
    private HadoopEnvelopes() {}

    /** A new data key and its envelope; the caller wipes {@code key}. */
    record DataKey(Envelope envelope, byte[] key) {}

    /** Which KMS: {@code --kms}, with its settings. */
    record Kms(String kind, String providerUri, String region, String endpoint, java.util.List<String> previousKeys) {
        /** The KMS that {@code --kms}, {@code --key-provider} and the {@code --kms-*} options name, checked. */
        static Kms of(String kind, String providerUri, String region, String endpoint, java.util.List<String> previousKeys,
                picocli.CommandLine commandLine) {
            previousKeys = previousKeys == null ? List.of() : previousKeys;
            if (!kind.equals("hadoop") && !kind.equals("aws")) {
                throw new UsageException(commandLine, "--kms must be hadoop (the --key-provider) or aws (AWS KMS)");
            }
            if (kind.equals("hadoop") && providerUri == null) {
                throw new UsageException(commandLine, "give --key-provider, the Hadoop key provider that holds the key"
                        + " (or --kms aws, for AWS KMS)");
            }
            if (kind.equals("hadoop") && (region != null || endpoint != null || !previousKeys.isEmpty())) {
                throw new UsageException(commandLine, "--kms-region, --kms-endpoint and --kms-previous-key are for --kms aws");
            }
            if (kind.equals("aws") && providerUri != null) {
                throw new UsageException(commandLine, "--key-provider is for --kms hadoop: AWS KMS is named by --kms aws,"
                        + " --kms-region and --kms-endpoint");
            }
            if (providerUri != null) {
                try {
                    new java.net.URI(providerUri);
                } catch (java.net.URISyntaxException e) {
                    throw new UsageException(commandLine, "--key-provider is not a URI (" + e.getReason() + ", at index "
                            + e.getIndex() + ")");
                }
            }
            return new Kms(kind, providerUri, region, endpoint, List.copyOf(previousKeys));
        }

        boolean aws() {
            return kind.equals("aws");
        }

        /** The option that names this KMS, for messages. */
        String option() {
            return aws() ? "--kms aws" : "--key-provider";
        }
    }

    /** A client of {@code kms} (asks it nothing yet). */
    static EnvelopeKms open(Kms kms) throws IOException {
        Configuration conf = new Configuration();
        if (!kms.aws()) {
            conf.set(SealedFileSystem.KEY_PROVIDER_PATH, kms.providerUri());
            return new HadoopEnvelopeKms(conf);
        }
        if (kms.region() != null) {
            conf.set(AwsEnvelopeKms.REGION, kms.region());
        }
        if (kms.endpoint() != null) {
            conf.set(AwsEnvelopeKms.ENDPOINT, kms.endpoint());
        }
        conf.setStrings(AwsEnvelopeKms.PREVIOUS_KEYS, kms.previousKeys().toArray(String[]::new));
        try {
            return new AwsEnvelopeKms(conf);
        } catch (NoClassDefFoundError e) {
            throw new IOException("--kms aws needs the AWS SDK v2 on the class path, which the CLI jar does not hold:"
                    + " S3A's bundle (SEALPIPE_CLASSPATH=\"$(hadoop classpath):$HADOOP_HOME/share/hadoop/tools/lib/*\"),"
                    + " or the jars of software.amazon.awssdk:kms and apache-client (" + e.getMessage() + ")", e);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage().replace(AwsEnvelopeKms.REGION, "--kms-region")
                    .replace(AwsEnvelopeKms.ENDPOINT, "--kms-endpoint"), e);
        }
    }

    /** A new data key of key {@code name} from a client of {@code named}, closed after; the caller wipes the key. */
    static DataKey generate(Kms named, String name, boolean compressed) throws IOException {
        return once(named, kms -> generate(kms, name, compressed), made -> Arrays.fill(made.key(), (byte) 0));
    }

    /** The data key of {@code envelope} from a client of {@code named}, closed after; the caller wipes it. */
    static byte[] unwrap(Kms named, Envelope envelope) throws IOException {
        return once(named, kms -> unwrap(kms, envelope), key -> Arrays.fill(key, (byte) 0));
    }

    private interface Call<T> {
        T on(EnvelopeKms kms) throws IOException;
    }

    /** {@code call} on a new client of {@code named}, then closed: if closing fails, the answer is wiped. */
    private static <T> T once(Kms named, Call<T> call, java.util.function.Consumer<T> wipe) throws IOException {
        EnvelopeKms kms = open(named);
        T answer;
        try {
            answer = call.on(kms);
        } catch (IOException | RuntimeException | Error e) {
            try {
                kms.close();
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        try {
            kms.close();
        } catch (IOException | RuntimeException e) {
            wipe.accept(answer);
            throw new IOException("cannot close the KMS client of " + kms.location() + ": " + e.getMessage(), e);
        }
        return answer;
    }

    /** A new data key of key {@code name} from {@code kms} (AWS: GenerateDataKey; Hadoop: GENERATE_EEK, then DECRYPT_EEK). */
    static DataKey generate(EnvelopeKms kms, String name, boolean compressed) throws IOException {
        EnvelopeKms.DataKey made;
        try {
            made = kms.generate(name);
        } catch (IOException | RuntimeException e) {
            throw failed("generate a data key under", "'" + name + "'", kms, e);
        }
        AesKey given = made == null ? null : made.key();
        try {
            Envelope envelope = EnvelopeWrapping.envelope(kms, name, compressed, made);
            return new DataKey(envelope, given == null ? unwrap(kms, envelope)
                    : KeyAccess.withBytes(given, byte[]::clone));
        } finally {
            if (given != null) {
                given.destroy();
            }
        }
    }

    /** The data key of {@code envelope}, unwrapped by {@code kms}; the caller wipes it. */
    static byte[] unwrap(EnvelopeKms kms, Envelope envelope) throws IOException {
        EnvelopeWrapping.checkKind(envelope, kms, switch (envelope.kind()) {
            case Envelope.KIND_AWS -> "give --kms aws";
            case Envelope.KIND_HADOOP -> "give --key-provider (and --kms hadoop, the default)";
            default -> "the CLI has no KMS client of that kind";
        });
        byte[] material;
        try {
            material = kms.unwrap(EnvelopeWrapping.wrappedKey(envelope));
        } catch (IOException | RuntimeException e) {
            throw failed("unwrap the data key of", "'" + envelope.keyName() + "' (version " + envelope.versionName() + ")",
                    kms, e);
        }
        return EnvelopeWrapping.checkedDataKey(material, envelope, kms);
    }

    private static IOException failed(String what, String key, EnvelopeKms kms, Exception e) {
        String more = "";
        String advice = kms.refusalAdvice();
        if (KmsGeneration.refusal(e) != null) {
            more = advice == null || advice.isEmpty() ? "" : "; the KMS refused: " + advice;
        } else if (unreachable(e)) {
            more = "; is the KMS reachable?";
        }
        return new IOException("cannot " + what + " the key " + key + " in " + kms.location() + ": " + e.getMessage()
                + more, e);
    }

    /** Whether {@code e} comes of a KMS that could not be reached (no connection, no answer, no such host). */
    private static boolean unreachable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof UnknownHostException
                    || t instanceof SocketTimeoutException || t instanceof NoRouteToHostException) {
                return true;
            }
        }
        return false;
    }
}
