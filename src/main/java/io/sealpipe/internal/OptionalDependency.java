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
    JNA("JNA", "com.sun.jna.Native", "com.sun.jna", "net.java.dev.jna", "jna", null),
    /** snappy-java, for {@code SnappyStreams}. */
    SNAPPY("snappy-java", "org.xerial.snappy.Snappy", "snappy.java", "org.xerial.snappy", "snappy-java", null),
    /**
     * The Amazon Corretto Crypto Provider, for the accp engine; its jars are per platform (the
     * classifier named is this JVM's: {@code linux-aarch_64}, ACCP's spelling, on 64-bit Arm,
     * else {@code linux-x86_64}).
     */
    ACCP("Amazon Corretto Crypto Provider", "com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider",
            "com.amazon.corretto.crypto.provider", "software.amazon.cryptools", "AmazonCorrettoCryptoProvider",
            "aarch64".equals(System.getProperty("os.arch")) || "arm64".equals(System.getProperty("os.arch"))
                    ? "linux-aarch_64" : "linux-x86_64"),
    /**
     * SLF4J's API (1.7 or 2.x, the application's own), which {@link Log} logs through; without it
     * {@link Log} logs through the JDK's {@code System.Logger} and nothing is unavailable.
     */
    SLF4J("SLF4J", "org.slf4j.LoggerFactory", "org.slf4j", "org.slf4j", "slf4j-api", null);

    private final String name;
    private final String probeClass;
    private final String module; // its name in module-info.java's requires static
    private final String groupId;
    private final String artifactId;
    private final String classifier; // null if the artifact has one jar for all platforms

    OptionalDependency(String name, String probeClass, String module, String groupId, String artifactId,
            String classifier) {
        this.name = name;
        this.probeClass = probeClass;
        this.module = module;
        this.groupId = groupId;
        this.artifactId = artifactId;
        this.classifier = classifier;
    }

    /**
     * Whether the dependency's classes are there for sealpipe's: its class file is looked up as a
     * resource, not loaded (loading a class of a signed jar, as ACCP's is, first verifies the
     * jar's signature: about 50 ms). On the module path, a module's class files are found only
     * if the module is resolved, and then sealpipe's module is made to read the one that has them
     * (see {@link #readFrom}).
     */
    public boolean isPresent() {
        ClassLoader loader = OptionalDependency.class.getClassLoader();
        String file = probeClass.replace('.', '/') + ".class";
        boolean found = loader == null ? ClassLoader.getSystemResource(file) != null : loader.getResource(file) != null;
        if (found && loader != null) {
            found = readFrom(loader);
        }
        return found;
    }

    /**
     * Where sealpipe is the module {@code io.sealpipe}, makes it read the module that holds the
     * dependency's package: a resolved module of any name (its {@code requires static} names the
     * module as it is named today, which a release of the dependency may change: snappy-java's
     * name is derived from its jar's file name) that exports the package to sealpipe, or the
     * class path module of the loader that defines the dependency's class (a module cannot
     * require the unnamed module, but may read it). Without that, the first use of the dependency
     * fails with {@code IllegalAccessError}: "module io.sealpipe does not read unnamed module". A
     * module that has the package but does not export it cannot be used: the dependency counts as
     * absent. On the class path, where sealpipe reads everything already, this does nothing.
     *
     * @return whether sealpipe can use the dependency
     */
    private boolean readFrom(ClassLoader loader) {
        Module self = OptionalDependency.class.getModule();
        if (!self.isNamed()) {
            return true;
        }
        String pkg = probeClass.substring(0, probeClass.lastIndexOf('.'));
        Module holder = holder(self.getLayer(), pkg);
        if (holder != null) {
            if (!holder.isExported(pkg, self)) {
                return false;
            }
            self.addReads(holder);
            return true;
        }
        try {
            self.addReads(Class.forName(probeClass, false, loader).getModule());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The module of {@code layer} or its parents that has {@code pkg}, or null. */
    private static Module holder(ModuleLayer layer, String pkg) {
        if (layer == null) {
            return null;
        }
        for (Module m : layer.modules()) {
            if (m.getPackages().contains(pkg)) {
                return m;
            }
        }
        for (ModuleLayer parent : layer.parents()) {
            Module m = holder(parent, pkg);
            if (m != null) {
                return m;
            }
        }
        return null;
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

    /**
     * Why the feature is missing and what to do, e.g. "JNA is not on the class path: add
     * net.java.dev.jna:jna (5.15.0)"; where sealpipe is on the module path, the dependency can be
     * on either, and a module must be resolved: "JNA is neither on the class path nor a resolved
     * module: add net.java.dev.jna:jna (5.15.0) to the class path, or to the module path with
     * --add-modules com.sun.jna".
     */
    public String absence() {
        if (OptionalDependency.class.getModule().isNamed()) {
            return name + " is neither on the class path nor a resolved module: add " + coordinates()
                    + " to the class path, or to the module path with --add-modules " + module;
        }
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
