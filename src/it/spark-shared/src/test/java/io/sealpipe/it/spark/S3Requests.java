package io.sealpipe.it.spark;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.AbortableInputStream;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;

/**
 * Counts the S3 requests of every AWS SDK v2 client in this JVM (Iceberg's {@code S3FileIO}'s):
 * a global {@link ExecutionInterceptor}, which the SDK loads from the test resource
 * {@code software/amazon/awssdk/global/handlers/execution.interceptors}
 * ({@code ClasspathInterceptorChainFactory}). Each GetObject and HeadObject is kept with its
 * bucket, key and range, the Content-Length of its response and the bytes its reader took from
 * the response body (less than the Content-Length of an open-ended GET that S3FileIO's stream
 * aborts when it closes or seeks away; what the HTTP client buffered past that is not counted).
 * Spark's local mode runs every task in this JVM, so these are all of a statement's requests.
 */
public final class S3Requests implements ExecutionInterceptor {
    /** One GetObject or HeadObject. */
    public record Request(String operation, String bucket, String key, String range, AtomicLong contentLength,
            AtomicLong bytesRead) {
        @Override
        public String toString() {
            return operation + " " + bucket + "/" + key + (range == null ? "" : " " + range) + ": "
                    + bytesRead + " of " + contentLength + " bytes read";
        }
    }

    /** A statement's requests under one prefix, summed. */
    public record Counts(long gets, long heads, long bytesRead, long contentLength) {}

    private static final ConcurrentLinkedQueue<Request> REQUESTS = new ConcurrentLinkedQueue<>();
    private static final ExecutionAttribute<Request> REQUEST = new ExecutionAttribute<>("sealpipe.it.request");

    /** The SDK's constructor. */
    public S3Requests() {
    }

    /**
     * Whether requests are kept: from the first {@link #reset()} on, so that the S3 clients of
     * other tests in the project (S3A's on Spark 4.0, which is on the same SDK) keep nothing.
     */
    private static volatile boolean counting;

    /** Forgets every request counted so far, and counts from now on. */
    public static void reset() {
        counting = true;
        REQUESTS.clear();
    }

    /** The requests counted since {@link #reset()} for keys of {@code bucket} under {@code prefix}. */
    public static List<Request> requests(String bucket, String prefix) {
        List<Request> found = new ArrayList<>();
        for (Request r : REQUESTS) {
            if (r.bucket().equals(bucket) && r.key().startsWith(prefix)) {
                found.add(r);
            }
        }
        return found;
    }

    /** {@link #requests} summed. */
    public static Counts counts(String bucket, String prefix) {
        long gets = 0;
        long heads = 0;
        long read = 0;
        long length = 0;
        for (Request r : requests(bucket, prefix)) {
            if (r.operation().equals("GetObject")) {
                gets++;
            } else {
                heads++;
            }
            read += r.bytesRead().get();
            length += Math.max(0, r.contentLength().get());
        }
        return new Counts(gets, heads, read, length);
    }

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        Request request = null;
        if (!counting) {
            return;
        }
        if (context.request() instanceof GetObjectRequest get) {
            request = new Request("GetObject", get.bucket(), get.key(), get.range(), new AtomicLong(-1), new AtomicLong());
        } else if (context.request() instanceof HeadObjectRequest head) {
            request = new Request("HeadObject", head.bucket(), head.key(), head.range(), new AtomicLong(-1),
                    new AtomicLong());
        }
        if (request != null) {
            attributes.putAttribute(REQUEST, request);
            REQUESTS.add(request);
        }
    }

    @Override
    public Optional<InputStream> modifyHttpResponseContent(Context.ModifyHttpResponse context,
            ExecutionAttributes attributes) {
        Optional<InputStream> body = context.responseBody();
        Request request = attributes.getAttribute(REQUEST);
        if (request == null) {
            return body;
        }
        context.httpResponse().firstMatchingHeader("Content-Length")
                .ifPresent(l -> request.contentLength().set(Long.parseLong(l)));
        if (body.isEmpty()) {
            return body;
        }
        InputStream content = body.get();
        InputStream counting = new FilterInputStream(content) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    request.bytesRead().incrementAndGet();
                }
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                if (n > 0) {
                    request.bytesRead().addAndGet(n);
                }
                return n;
            }

            @Override
            public long skip(long n) throws IOException {
                long skipped = super.skip(n);
                request.bytesRead().addAndGet(skipped);
                return skipped;
            }
        };
        // Keep the HTTP client's abort: S3FileIO aborts a stream it closes early.
        return Optional.of(content instanceof AbortableInputStream abortable
                ? AbortableInputStream.create(counting, abortable::abort) : counting);
    }
}
