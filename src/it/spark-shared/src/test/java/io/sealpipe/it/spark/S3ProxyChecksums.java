package io.sealpipe.it.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import software.amazon.awssdk.core.checksums.ChecksumSpecs;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.core.interceptor.SdkInternalExecutionAttribute;
import software.amazon.awssdk.core.interceptor.trait.HttpChecksum;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectsRequest;

/**
 * Content-MD5, not a CRC, on DeleteObjects (the one S3 request here that must carry a checksum),
 * for S3Proxy, which answers the CRC32 header the SDK v2 sends there since 2.30 with "501 A
 * header you provided implies functionality that is not implemented": a global interceptor (test
 * resource {@code software/amazon/awssdk/global/handlers/execution.interceptors}), since Iceberg's
 * {@code S3FileIO} builds its client with no property that adds the SDK's {@code LegacyMd5Plugin}.
 * Without it, S3FileIO's bulk deletes fail, and {@code expire_snapshots} only logs that it deleted
 * nothing. On an SDK before 2.30 (hadoop-aws's bundle 2.24.6 in Spark 4.0) the request is the same.
 */
public final class S3ProxyChecksums implements ExecutionInterceptor {
    /** The SDK's constructor. */
    public S3ProxyChecksums() {
    }

    @Override
    public SdkHttpRequest modifyHttpRequest(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
        SdkHttpRequest request = context.httpRequest();
        if (!(context.request() instanceof DeleteObjectsRequest) || context.requestBody().isEmpty()
                || request.firstMatchingHeader("Content-MD5").isPresent()) {
            return request;
        }
        // No flexible checksum: the SDK then adds no CRC header when it signs.
        attributes.putAttribute(SdkInternalExecutionAttribute.HTTP_CHECKSUM, HttpChecksum.builder()
                .requestChecksumRequired(false).build());
        attributes.putAttribute(SdkExecutionAttribute.RESOLVED_CHECKSUM_SPECS, ChecksumSpecs.builder()
                .isRequestChecksumRequired(false).build());
        String md5;
        try (InputStream body = context.requestBody().get().contentStreamProvider().newStream()) {
            md5 = Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(body.readAllBytes()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        return request.copy(b -> b.putHeader("Content-MD5", md5));
    }
}
