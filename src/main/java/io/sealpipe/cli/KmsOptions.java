package io.sealpipe.cli;

import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options that choose the KMS of envelope files beside {@code --key-provider}: {@code --kms}
 * and AWS KMS's settings. In {@code encrypt}/{@code decrypt}'s key options and in {@code rewrap}.
 */
final class KmsOptions {
    @Option(names = "--kms", paramLabel = "KMS", description = "Envelope files: the KMS that wraps the data keys:"
            + " hadoop (default), the --key-provider; or aws, AWS KMS, where the key is named by its id, its ARN or"
            + " alias/NAME (GenerateDataKey, Decrypt, ReEncrypt; credentials from S3A's settings where S3A is on the"
            + " class path, else the AWS SDK's: AWS_ACCESS_KEY_ID..., the profile, the instance). Needs the AWS SDK v2"
            + " on the class path: S3A's bundle.")
    String kms;

    @Option(names = "--kms-region", paramLabel = "REGION", description = "--kms aws: the KMS's region (default:"
            + " fs.s3a.endpoint.region, else the AWS SDK's: AWS_REGION, the profile).")
    String region;

    @Option(names = "--kms-endpoint", paramLabel = "URL", description = "--kms aws: the KMS's URL, for a VPC endpoint"
            + " or an emulator (default: AWS's for the region).")
    String endpoint;

    @Option(names = "--kms-previous-key", paramLabel = "ARN", description = "--kms aws, decrypt and rewrap: a KMS key"
            + " (ARN or id) that the key name named before (an alias moved to a new key): its files open, and rewrap"
            + " moves them to the key the name names now; a file never chooses the key that unwraps it. Repeatable.")
    List<String> previousKeys;

    /** The KMS that {@code options} (null: none given) and {@code providerUri} name, checked. */
    static HadoopEnvelopes.Kms kms(KmsOptions options, String providerUri, picocli.CommandLine commandLine) {
        KmsOptions o = options == null ? new KmsOptions() : options;
        return HadoopEnvelopes.Kms.of(o.kms == null ? "hadoop" : o.kms, providerUri, o.region, o.endpoint,
                o.previousKeys, commandLine);
    }
}
