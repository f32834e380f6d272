package io.sealpipe.it.s3a;

import io.sealpipe.it.s3.S3Server;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;
import org.junit.rules.ExternalResource;

/**
 * The {@link S3Server} of Hadoop's contract tests (JUnit 4), one for every contract class of the
 * JVM (they run in one, the pom's {@code contract} execution):
 * {@code @ClassRule public static final S3ServerRule SERVER = new S3ServerRule();} starts it
 * before the first class's first test, and {@link StopAtSessionEnd} stops it when JUnit's launcher
 * session ends, after the last class (Surefire opens one session per JVM and closes it in a
 * {@code finally}). One server rather than one per class: S3A caches its file system instances by
 * bucket, so a second server on another port would leave later classes with a client of the
 * first, and each start is time spent again. Each test works under a directory of its own, which
 * the contract deletes.
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
                shared = S3Server.start();
            } catch (Exception e) {
                throw new IllegalStateException("S3Proxy did not start", e);
            }
        }
        return shared;
    }

    /** Stops the server, if one started; the next {@link #server()} starts another. */
    static synchronized void stop() throws Exception {
        S3Server started = shared;
        shared = null;
        if (started != null) {
            started.close();
            System.err.println("S3ServerRule: the contract tests' S3Proxy stopped at the end of the session");
        }
    }

    /**
     * Stops the shared server at the end of the launcher session (registered in
     * META-INF/services/org.junit.platform.launcher.LauncherSessionListener).
     */
    public static final class StopAtSessionEnd implements LauncherSessionListener {
        @Override
        public void launcherSessionClosed(LauncherSession session) {
            try {
                stop();
            } catch (Exception e) {
                throw new IllegalStateException("S3Proxy did not stop", e);
            }
        }
    }
}
