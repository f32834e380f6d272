package io.sealpipe.hadoop;

import io.sealpipe.AesKey;
import io.sealpipe.internal.Envelope;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.AccessControlException;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.kms.KmsClient;
import software.amazon.awssdk.services.kms.KmsClientBuilder;
import software.amazon.awssdk.services.kms.model.DataKeySpec;
import software.amazon.awssdk.services.kms.model.DecryptResponse;
import software.amazon.awssdk.services.kms.model.GenerateDataKeyResponse;
import software.amazon.awssdk.services.kms.model.ReEncryptResponse;

/**
 * Envelope keys from AWS KMS ({@code sealpipe.fs.kms.class=io.sealpipe.hadoop.AwsEnvelopeKms}):
 * {@code GenerateDataKey} for a new data key (one call gives it and its wrapped form), {@code
 * Decrypt} to unwrap one, {@code ReEncrypt} to wrap one again under the key that {@code
 * sealpipe.fs.key.name} names now, inside the KMS. The key is named as AWS names it: a key id, a
 * key ARN, an alias ({@code alias/NAME}) or an alias ARN. The envelope's kind is {@value #KIND};
 * its version is the ARN of the KMS key that wrapped the data key (from the KMS's answer), its IV
 * empty, its wrapped key the KMS's ciphertext blob.
 *
 * <p>Every data key is bound to its use by an encryption context, {@code {"sealpipe":
 * "sealed-file", "sealpipe:key": NAME}} with the key name as configured: the KMS unwraps it under
 * that context only, so a data key taken from another use of the same KMS key (another program's,
 * or a file of another key name) does not open. IAM policies may name it ({@code
 * kms:EncryptionContext:sealpipe}).
 *
 * <p>Settings, in the file system's configuration:
 *
 * <ul>
 *   <li>{@value #REGION}: the KMS's region; by default S3A's region for the bucket ({@code
 *       fs.s3a.bucket.BUCKET.endpoint.region}, {@code fs.s3a.endpoint.region}), else the AWS
 *       SDK's (the {@code AWS_REGION} environment variable, the profile, the instance).
 *   <li>{@value #ENDPOINT}: the KMS's URL, for a VPC endpoint or a KMS emulator; by default AWS's
 *       for the region.
 *   <li>{@value #PREVIOUS_KEYS}: the keys (ARNs or ids) that the key name named before (an alias
 *       moved): a data key is unwrapped under the key the name names now, or one of these, never
 *       under a key that only the file's envelope names.
 *   <li>Credentials: S3A's ({@code fs.s3a.aws.credentials.provider}, {@code fs.s3a.access.key}
 *       and the rest, per bucket as S3A reads them) where S3A is on the class path, else the AWS
 *       SDK's default chain (environment, profile, container, instance).
 * </ul>
 *
 * Needs the AWS SDK v2's {@code software.amazon.awssdk:kms} and {@code apache-client} (or S3A's
 * SDK bundle, which has both) on the class path. A refusal ({@code AccessDeniedException}) is an
 * {@link AccessControlException}; every failure says what the KMS answered.
 */
@SuppressWarnings("exports") // Hadoop's types in this API: module-info.java says why they are not "requires transitive"
public final class AwsEnvelopeKms implements EnvelopeKms {
    /** The envelope kind of a data key wrapped by AWS KMS. */
    public static final int KIND = Envelope.KIND_AWS;
    /** The AWS region of the KMS. */
    public static final String REGION = "sealpipe.fs.kms.aws.region";
    /** The URL of the KMS, where it is not AWS's for the region. */
    public static final String ENDPOINT = "sealpipe.fs.kms.aws.endpoint";
    /**
     * KMS keys (ARNs or key ids, comma-separated) that {@code sealpipe.fs.key.name} named before:
     * files whose data keys they wrapped still open, until {@code sealpipe rewrap} moves them.
     */
    public static final String PREVIOUS_KEYS = "sealpipe.fs.kms.aws.previous.keys";
    private static final String S3A_CREDENTIALS = "org.apache.hadoop.fs.s3a.auth.CredentialProviderListFactory";

    private final KmsClient kms;
    private final AutoCloseable credentials;
    private final String location;
    private final java.util.Set<String> previousKeys;

    /**
     * A client of the KMS that {@code conf} names; asks it nothing yet.
     *
     * @param conf the file system's configuration (with {@code sealpipe.fs.kms.binding}, the URI
     *     of the file system it wraps, for S3A's per-bucket settings)
     * @throws IOException if the region or the credentials cannot be found, or the endpoint is no URL
     */
    public AwsEnvelopeKms(Configuration conf) throws IOException {
        URI binding = binding(conf);
        Region region = region(conf, binding);
        previousKeys = java.util.Set.copyOf(conf.getTrimmedStringCollection(PREVIOUS_KEYS));
        String endpoint = conf.getTrimmed(ENDPOINT, "");
        URI endpointUri = null;
        if (!endpoint.isEmpty()) {
            try {
                endpointUri = URI.create(endpoint);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(ENDPOINT + " is " + endpoint + ", which is not a URL: give the KMS's"
                        + " URL, such as https://kms.eu-west-2.amazonaws.com, or leave it unset for AWS's", e);
            }
            if (endpointUri.getScheme() == null || endpointUri.getHost() == null) {
                throw new IllegalArgumentException(ENDPOINT + " is " + endpoint + ", which is not a URL with a scheme and"
                        + " a host: give the KMS's URL, such as https://kms.eu-west-2.amazonaws.com");
            }
        }
        location = endpointUri != null ? endpoint + " (AWS KMS, region " + region.id() + ")"
                : "AWS KMS in " + region.id() + " (kms." + region.id() + ".amazonaws.com)";
        AwsCredentialsProvider provider = credentials(conf, binding);
        credentials = provider instanceof AutoCloseable closeable ? closeable : () -> { };
        try {
            KmsClientBuilder builder = KmsClient.builder()
                    .region(region)
                    .credentialsProvider(provider)
                    .httpClientBuilder(ApacheHttpClient.builder()
                            .connectionTimeout(Duration.ofSeconds(10))
                            .socketTimeout(Duration.ofSeconds(60)));
            if (endpointUri != null) {
                builder.endpointOverride(endpointUri);
            }
            kms = builder.build();
        } catch (RuntimeException | Error e) {
            closeQuietly(credentials);
            throw e;
        }
    }

    /** The URI of the file system being sealed, which the sealed file system sets; null if none. */
    private static URI binding(Configuration conf) {
        String binding = conf.getTrimmed(SealedFileSystem.KMS_BINDING, "");
        return binding.isEmpty() ? null : URI.create(binding);
    }

    private static Region region(Configuration conf, URI binding) {
        String region = conf.getTrimmed(REGION, "");
        if (region.isEmpty() && binding != null && binding.getHost() != null) {
            region = conf.getTrimmed("fs.s3a.bucket." + binding.getHost() + ".endpoint.region", "");
        }
        if (region.isEmpty()) {
            region = conf.getTrimmed("fs.s3a.endpoint.region", "");
        }
        if (!region.isEmpty()) {
            return Region.of(region);
        }
        try {
            return DefaultAwsRegionProviderChain.builder().build().getRegion();
        } catch (SdkException e) {
            throw new IllegalArgumentException("no AWS region for the KMS: set " + REGION + " (such as eu-west-2), or"
                    + " fs.s3a.endpoint.region, or the AWS_REGION environment variable (" + e.getMessage() + ")", e);
        }
    }

    /** S3A's credential providers for the binding where S3A is on the class path, else the SDK's default chain. */
    private static AwsCredentialsProvider credentials(Configuration conf, URI binding) throws IOException {
        try {
            Class.forName(S3A_CREDENTIALS, false, AwsEnvelopeKms.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return DefaultCredentialsProvider.builder().build();
        }
        return S3aCredentials.of(conf, binding);
    }

    /** Apart, so that S3A's classes load only where they are. */
    private static final class S3aCredentials {
        static AwsCredentialsProvider of(Configuration conf, URI binding) throws IOException {
            boolean s3a = binding != null && "s3a".equals(binding.getScheme()) && binding.getHost() != null;
            Configuration bucket = s3a ? org.apache.hadoop.fs.s3a.S3AUtils.propagateBucketOptions(conf, binding.getHost())
                    : conf;
            return org.apache.hadoop.fs.s3a.auth.CredentialProviderListFactory.createAWSCredentialProviderList(
                    s3a ? binding : null, bucket);
        }
    }

    @Override
    public int kind() {
        return KIND;
    }

    @Override
    public String location() {
        return location;
    }

    /** {@code ReEncrypt} decrypts and encrypts again inside the KMS: the data key stays the same. */
    @Override
    public boolean rewrapKeepsDataKey() {
        return true;
    }

    /** A {@code GenerateDataKey}: the data key and its wrapped form, in one call. */
    @Override
    public DataKey generate(String keyName) throws IOException {
        GenerateDataKeyResponse made = call(null, keyName, () -> kms.generateDataKey(request -> request
                .keyId(keyName).keySpec(DataKeySpec.AES_256).encryptionContext(context(keyName))));
        byte[] plaintext = made.plaintext() == null ? new byte[0] : made.plaintext().asByteArrayUnsafe();
        try {
            if (plaintext.length != Envelope.DATA_KEY_BYTES || made.ciphertextBlob() == null || made.keyId() == null) {
                throw new IOException("the KMS " + location + " answered GenerateDataKey under '" + keyName + "' with "
                        + plaintext.length + " bytes of key, " + (made.ciphertextBlob() == null ? "no" : "a")
                        + " wrapped key and " + (made.keyId() == null ? "no" : "a") + " key ARN: it must give a 256-bit"
                        + " data key, its wrapped form and the key's ARN");
            }
            WrappedKey wrapped = new WrappedKey(keyName, made.keyId(), new byte[0], made.ciphertextBlob().asByteArray());
            return new DataKey(wrapped, AesKey.copyOf(plaintext));
        } finally {
            Arrays.fill(plaintext, (byte) 0);
        }
    }

    /**
     * A {@code Decrypt} under the context, of a blob that the KMS checks was wrapped by the key
     * that the key name names now, or by one of {@value #PREVIOUS_KEYS}: never by a key that only
     * the file names (anyone may wrap a data key under a key of their own, with any context).
     */
    @Override
    public byte[] unwrap(WrappedKey wrapped) throws IOException {
        String keyId = trustedKey(wrapped);
        DecryptResponse unwrapped = call(wrapped, keyId, () -> kms.decrypt(request -> request
                .keyId(keyId).ciphertextBlob(SdkBytes.fromByteArrayUnsafe(wrapped.wrapped()))
                .encryptionContext(context(wrapped.keyName()))));
        if (unwrapped.plaintext() == null) {
            return new byte[0];
        }
        byte[] material = unwrapped.plaintext().asByteArrayUnsafe();
        byte[] copy = material.clone();
        Arrays.fill(material, (byte) 0);
        return copy;
    }

    /**
     * A {@code ReEncrypt} to the key the name names now (an alias's current target), from the key
     * that wrapped it if that is one of {@value #PREVIOUS_KEYS}, else from the name's own key: the
     * data key stays in the KMS.
     */
    @Override
    public WrappedKey rewrap(WrappedKey wrapped) throws IOException {
        Map<String, String> context = context(wrapped.keyName());
        String keyId = trustedKey(wrapped);
        ReEncryptResponse again = call(wrapped, keyId, () -> kms.reEncrypt(request -> request
                .sourceKeyId(keyId).destinationKeyId(wrapped.keyName())
                .ciphertextBlob(SdkBytes.fromByteArrayUnsafe(wrapped.wrapped()))
                .sourceEncryptionContext(context).destinationEncryptionContext(context)));
        if (again.ciphertextBlob() == null || again.keyId() == null) {
            throw new IOException("the KMS " + location + " answered ReEncrypt under '" + wrapped.keyName()
                    + "' with no wrapped key");
        }
        return new WrappedKey(wrapped.keyName(), again.keyId(), new byte[0], again.ciphertextBlob().asByteArray());
    }

    /**
     * The encryption context of every data key under {@code keyName}.
     *
     * @param keyName the key as configured ({@code sealpipe.fs.key.name})
     * @return {@code {"sealpipe": "sealed-file", "sealpipe:key": keyName}}
     */
    public static Map<String, String> context(String keyName) {
        return Envelope.awsEncryptionContext(keyName);
    }

    /**
     * The key that the KMS must find wrapped {@code wrapped}: the key that wrapped it, as its
     * envelope says, only if that is one of {@value #PREVIOUS_KEYS}; else the key name itself.
     */
    private String trustedKey(WrappedKey wrapped) {
        String arn = wrapped.versionName();
        for (String previous : previousKeys) {
            if (arn.equals(previous) || arn.endsWith(":key/" + previous)) {
                return arn;
            }
        }
        return wrapped.keyName();
    }

    /**
     * {@code request} under the key {@code keyId}, with the SDK's failures as IOExceptions that
     * say what the KMS answered and what to do; {@code wrapped}: the data key it unwraps, or null.
     */
    private <T> T call(WrappedKey wrapped, String keyId, Supplier<T> request) throws IOException {
        try {
            return request.get();
        } catch (AwsServiceException e) {
            String code = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
            String answer = (code == null ? "HTTP " + e.statusCode() : code) + ": " + message(e);
            if ("AccessDeniedException".equals(code)) {
                AccessControlException denied = new AccessControlException("AWS KMS denied the request (" + answer
                        + "); a writer needs kms:GenerateDataKey on the key, a reader kms:Decrypt, sealpipe rewrap"
                        + " kms:ReEncryptFrom and kms:ReEncryptTo (docs/sealed-files.md, \"Keys in AWS KMS\")");
                denied.initCause(e);
                throw denied;
            }
            String hint = hint(code);
            if (wrapped != null && (code == null || code.equals("InvalidCiphertextException")
                    || code.equals("IncorrectKeyException")) && keyId.equals(wrapped.keyName())) {
                hint = " (its envelope says that the key " + wrapped.versionName() + " wrapped its data key, and the KMS"
                        + " found that the data key was not wrapped by the key '" + wrapped.keyName() + "' names now,"
                        + " under its encryption context: if '" + wrapped.keyName() + "' named that key before, list it"
                        + " in " + PREVIOUS_KEYS + " (CLI: --kms-previous-key) to read such files and run sealpipe rewrap"
                        + " to move them to the current key; else the file was not sealed under this key)";
            }
            throw new IOException("AWS KMS answered " + answer + hint, e);
        } catch (SdkException e) {
            if (credentialsMissing(e)) {
                throw new IOException("no AWS credentials for the KMS: " + e.getMessage() + "; give them as S3A's"
                        + " (fs.s3a.access.key and fs.s3a.secret.key, or fs.s3a.aws.credentials.provider) or the AWS"
                        + " SDK's (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, an instance role)", e);
            }
            throw new IOException("cannot reach AWS KMS: " + e.getMessage(), e);
        }
    }

    /** Whether {@code e} says that no credentials were found (the SDK's chain, or S3A's). */
    private static boolean credentialsMissing(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String message = String.valueOf(t.getMessage());
            if (t.getClass().getSimpleName().contains("Credentials") || message.contains("Unable to load credentials")
                    || message.contains("No AWS Credentials")) {
                return true;
            }
        }
        return false;
    }

    private static String message(AwsServiceException e) {
        String message = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorMessage();
        return message == null ? e.getMessage() : message;
    }

    /** What to do about the KMS's answer {@code code}. */
    private static String hint(String code) {
        if (code == null) {
            return "";
        }
        return switch (code) {
            case "NotFoundException" -> " (no such key: check " + SealedFileSystem.KEY_NAME + ", its region and account)";
            case "DisabledException", "KMSInvalidStateException" -> " (the key is disabled or pending deletion: enable"
                    + " it, or point the alias at a key in use)";
            case "InvalidCiphertextException", "IncorrectKeyException" -> " (the wrapped data key does not belong to"
                    + " the key and encryption context it was given to: a tampered envelope, or a file of another key"
                    + " name)";
            default -> "";
        };
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // already failing
        }
    }

    @Override
    public void close() throws IOException {
        try {
            kms.close();
        } finally {
            try {
                credentials.close();
            } catch (IOException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IOException(e);
            }
        }
    }

    @Override
    public String toString() {
        return "AwsEnvelopeKms(" + location + ")";
    }
}
