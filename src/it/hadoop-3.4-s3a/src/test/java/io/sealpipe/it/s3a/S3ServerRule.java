package io.sealpipe.it.s3a;

import io.sealpipe.it.s3.S3Server;
import org.junit.rules.ExternalResource;

/**
 * One {@link S3Server} for a JUnit 4 test class (Hadoop's contract tests):
 * {@code @ClassRule public static final S3ServerRule SERVER = new S3ServerRule();}
 * starts it before the class's first test and stops it after the last, failed or not.
 */
public final class S3ServerRule extends ExternalResource {
    private static volatile S3Server current;
    @Override
    protected void before() throws Throwable {
        current = S3Server.start();
    }

    @Override
    protected void after() {
        S3Server server = current;
        current = null;
        try {
            server.close();
        } catch (Exception e) {
            throw new IllegalStateException("S3Proxy did not stop", e);
        }
    }

    /** The running server of this JVM's test class. */
    static S3Server server() {
        S3Server server = current;
        if (server == null) {
            throw new IllegalStateException("no S3 server: the test class needs @ClassRule S3ServerRule");
        }
        return server;
    }
}
