package io.sealpipe.it.s3a;

import io.sealpipe.it.s3.S3Server;
import org.junit.rules.ExternalResource;

/**
 * The {@link S3Server} of Hadoop's contract tests (JUnit 4), one for every contract class of the
 * JVM (they run in one, the pom's {@code contract} execution):
 * {@code @ClassRule public static final S3ServerRule SERVER = new S3ServerRule();} starts it
 * before the first class's first test, and it stops when the JVM ends (S3Proxy lives in this
 * JVM, so it cannot outlive it). One server rather than one per class: S3A caches its file
 * system instances by bucket, so a second server on another port would leave later classes
 * with a client of the first, and each start is time spent again. Each test works under a
 * directory of its own, which the contract deletes.
 */
public final class S3ServerRule extends ExternalResource {
    private static S3Server shared;

    @Override
    protected void before() throws Throwable {
        server();
    }

    /** This JVM's server, started on the first call. */
    static synchronized S3Server server() {
        if (shared == null) {
            try {
                S3Server started = S3Server.start();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        started.close();
                    } catch (Exception e) {
                        System.err.println("S3Proxy did not stop: " + e);
                    }
                }, "s3proxy-stop"));
                shared = started;
            } catch (Exception e) {
                throw new IllegalStateException("S3Proxy did not start", e);
            }
        }
        return shared;
    }
}
