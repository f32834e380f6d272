package io.sealpipe.internal;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The optional dependencies of the core packages. An absent one makes only its own feature
 * unavailable, with {@link #absence()} as the reason (SLF4J: nothing, since {@link Log} then
 * logs through the JDK): code that links against it (the openssl-jna engine, the Snappy
 * framing, {@code Slf4jLog}) must not even be loaded before {@link #isPresent()} says it is
 * there, because the JVM fails with {@code NoClassDefFoundError} already while verifying such a
 * class.
 */
public enum OptionalDependency {
    /** JNA, for the openssl-jna engine. */
    JNA("JNA", "com.sun.jna.Native", "net.java.dev.jna", "jna", null),
    /** snappy-java, for {@code SnappyStreams}. */
    SNAPPY("snappy-java", "org.xerial.snappy.Snappy", "org.xerial.snappy", "snappy-java", null),
    /**
     * The Amazon Corretto Crypto Provider, for the accp engine; its jars are per platform (the
     * classifier named is this JVM's: {@code linux-aarch64} on 64-bit Arm, else {@code linux-x86_64}).
     */
    ACCP("Amazon Corretto Crypto Provider", "com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider",
            "software.amazon.cryptools", "AmazonCorrettoCryptoProvider",
            "aarch64".equals(System.getProperty("os.arch")) || "arm64".equals(System.getProperty("os.arch"))
                    ? "linux-aarch64" : "linux-x86_64"),
    /**
     * SLF4J's API (1.7 or 2.x, the application's own), which {@link Log} logs through; without it
     * {@link Log} logs through the JDK's {@code System.Logger} and nothing is unavailable.
     */
    SLF4J("SLF4J", "org.slf4j.LoggerFactory", "org.slf4j", "slf4j-api", null);

    private final String name;
    private final String probeClass;
    private final String groupId;
    private final String artifactId;
    private final String classifier; // null if the artifact has one jar for all platforms

    OptionalDependency(String name, String probeClass, String groupId, String artifactId, String classifier) {
        this.name = name;
        this.probeClass = probeClass;
        this.groupId = groupId;
        this.artifactId = artifactId;
        this.classifier = classifier;
    }

    /**
     * Whether the dependency's classes are on the class path: its class file is looked up as a
     * resource, not loaded (loading a class of a signed jar, as ACCP's is, first verifies the
     * jar's signature: about 50 ms).
     */
    public boolean isPresent() {
        ClassLoader loader = OptionalDependency.class.getClassLoader();
        String file = probeClass.replace('.', '/') + ".class";
        return loader == null ? ClassLoader.getSystemResource(file) != null : loader.getResource(file) != null;
    }

    /**
     * The Maven coordinates to add, with the version sealpipe is built with:
     * {@code net.java.dev.jna:jna (5.15.0)}, or with the classifier of a per-platform jar:
     * {@code software.amazon.cryptools:AmazonCorrettoCryptoProvider (2.5.0, classifier linux-x86_64)}.
     */
    public String coordinates() {
        String version = Versions.BUILT_WITH.getProperty(artifactId);
        boolean known = version != null && !version.startsWith("${"); // unfiltered when built outside Maven
        String classified = classifier == null ? "" : "classifier " + classifier;
        String details = known && classifier != null ? version + ", " + classified : known ? version : classified;
        return groupId + ":" + artifactId + (details.isEmpty() ? "" : " (" + details + ")");
    }

    /** Why the feature is missing and what to do, e.g. "JNA is not on the class path: add net.java.dev.jna:jna (5.15.0)". */
    public String absence() {
        return name + " is not on the class path: add " + coordinates();
    }

    /** The versions from pom.xml, written into a resource at build time; empty if it is missing. */
    private static final class Versions {
        static final Properties BUILT_WITH = load();

        private static Properties load() {
            Properties p = new Properties();
            try (InputStream in = OptionalDependency.class.getResourceAsStream("optional-dependencies.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                // the message then names the coordinates without a version
            }
            return p;
        }
    }
}
