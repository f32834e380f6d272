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
import java.util.Arrays;
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
    record Kms(String kind, String providerUri, String region, String endpoint) {
        /** The KMS that {@code --kms}, {@code --key-provider}, {@code --kms-region} and {@code --kms-endpoint} name, checked. */
        static Kms of(String kind, String providerUri, String region, String endpoint, picocli.CommandLine commandLine) {
            if (!kind.equals("hadoop") && !kind.equals("aws")) {
                throw new UsageException(commandLine, "--kms must be hadoop (the --key-provider) or aws (AWS KMS), not "
                        + kind);
            }
            if (kind.equals("hadoop") && providerUri == null) {
                throw new UsageException(commandLine, "give --key-provider, the Hadoop key provider that holds the key"
                        + " (or --kms aws, for AWS KMS)");
            }
            if (kind.equals("hadoop") && (region != null || endpoint != null)) {
                throw new UsageException(commandLine, "--kms-region and --kms-endpoint are for --kms aws");
            }
            if (kind.equals("aws") && providerUri != null) {
                throw new UsageException(commandLine, "--key-provider is for --kms hadoop: AWS KMS is named by --kms aws,"
                        + " --kms-region and --kms-endpoint");
            }
            if (providerUri != null) {
                try {
                    new java.net.URI(providerUri);
                } catch (java.net.URISyntaxException e) {
                    throw new UsageException(commandLine, "--key-provider is not a URI: " + e.getMessage());
                }
            }
            return new Kms(kind, providerUri, region, endpoint);
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

    /** A new data key of key {@code name} from {@code kms} (AWS: GenerateDataKey; Hadoop: GENERATE_EEK, then DECRYPT_EEK). */
    static DataKey generate(EnvelopeKms kms, String name, boolean compressed) throws IOException {
        EnvelopeKms.DataKey made;
        try {
            made = kms.generate(name);
        } catch (IOException | RuntimeException e) {
            throw failed("generate a data key under", "'" + name + "'", kms, e);
        }
        AesKey given = made.key();
        try {
            Envelope envelope = EnvelopeWrapping.envelope(kms, compressed, made.wrapped());
            if (given == null) {
                return new DataKey(envelope, unwrap(kms, envelope));
            }
            if (given.length() != Envelope.DATA_KEY_BYTES) {
                throw new IOException("the KMS " + kms.location() + " gave a data key of " + given.length() + " bytes, not 32");
            }
            return new DataKey(envelope, KeyAccess.withBytes(given, byte[]::clone));
        } finally {
            if (given != null) {
                given.destroy();
            }
        }
    }

    /** The data key of {@code envelope}, unwrapped by {@code kms}; the caller wipes it. */
    static byte[] unwrap(EnvelopeKms kms, Envelope envelope) throws IOException {
        String key = "'" + envelope.keyName() + "' (version " + envelope.versionName() + ")";
        if (envelope.kind() != kms.kind()) {
            throw new IOException("its data key was wrapped by a KMS of kind " + Envelope.describeKind(envelope.kind())
                    + ", not by the " + (kms.kind() == Envelope.KIND_AWS ? "--kms aws" : "--key-provider") + " (kind "
                    + Envelope.describeKind(kms.kind()) + "): " + (envelope.kind() == Envelope.KIND_AWS
                            ? "give --kms aws" : "give --key-provider and leave --kms at hadoop"));
        }
        byte[] material;
        try {
            material = kms.unwrap(EnvelopeWrapping.wrappedKey(envelope));
        } catch (IOException | RuntimeException e) {
            throw failed("unwrap the data key of", key, kms, e);
        }
        if (material == null || material.length != Envelope.DATA_KEY_BYTES) {
            if (material != null) {
                Arrays.fill(material, (byte) 0);
            }
            throw new IOException("the KMS " + kms.location() + " unwrapped the data key of " + key + " to "
                    + (material == null ? "nothing" : material.length + " bytes") + ", not 32: the key must be 256 bits");
        }
        return material;
    }

    private static IOException failed(String what, String key, EnvelopeKms kms, Exception e) {
        String more = "";
        if (kms instanceof HadoopEnvelopeKms) {
            more = KmsGeneration.refusal(e) != null
                    ? "; the KMS refused: encrypt needs GENERATE_EEK and DECRYPT_EEK on the key, decrypt DECRYPT_EEK"
                    : "; is the provider reachable?";
        }
        return new IOException("cannot " + what + " the key " + key + " in " + kms.location() + ": " + e.getMessage()
                + more, e);
    }
}
