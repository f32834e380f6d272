package io.sealpipe.it.s3;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * An S3 server for the tests: S3Proxy (org.gaul:s3proxy) over jclouds' in-memory blob store
 * ({@code transient}: of jclouds' stores, the one that keeps S3A's directory markers, the
 * {@code dir/} objects, as objects), listening on 127.0.0.1 on a port the system chooses,
 * with AWS signature v2/v4 authentication for one test identity. S3Proxy runs in this JVM in a
 * class loader of its own over its {@code jar-with-dependencies} (system property {@value
 * #JAR_PROPERTY}, copied by maven-dependency-plugin): its Guava, Jackson and jclouds never meet
 * Hadoop's or Spark's. {@link #close()} stops it; call it in a {@code finally} or {@code @AfterAll}.
 *
 * <p>One copy for the projects that test against S3 ({@code hadoop-3.4-s3a}, {@code spark-3.5},
 * {@code spark-4.0}), which add this directory to their test sources; its logging configuration,
 * {@code s3proxy-logback.xml} beside it, is their {@code logback.configurationFile}.
 */
public final class S3Server implements AutoCloseable {
    public static final String BUCKET = "sealpipe";
    private static final String IDENTITY = "sealpipe-test";
    private static final String CREDENTIAL = "sealpipe-test-secret";
    private static final String JAR_PROPERTY = "sealpipe.it.s3proxy.jar";

    private final URLClassLoader loader;
    private final Object proxy;
    private final Object blobStoreContext;
    private final Object blobStore;
    private final int port;

    private S3Server(URLClassLoader loader, Object proxy, Object blobStoreContext, Object blobStore, int port) {
        this.loader = loader;
        this.proxy = proxy;
        this.blobStoreContext = blobStoreContext;
        this.blobStore = blobStore;
        this.port = port;
    }

    /** Starts a server with an empty bucket {@link #BUCKET}. */
    public static S3Server start() throws Exception {
        URLClassLoader loader = new URLClassLoader("s3proxy", new URL[] {jar()}, ClassLoader.getPlatformClassLoader());
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader); // jclouds finds its providers through the context class loader
        Object context = null;
        try {
            Class<?> contextBuilder = loader.loadClass("org.jclouds.ContextBuilder");
            Object builder = contextBuilder.getMethod("newBuilder", String.class).invoke(null, "transient");
            builder = contextBuilder.getMethod("credentials", String.class, String.class).invoke(builder, IDENTITY, CREDENTIAL);
            Class<?> contextClass = loader.loadClass("org.jclouds.blobstore.BlobStoreContext");
            context = contextBuilder.getMethod("build", Class.class).invoke(builder, contextClass);
            Object blobStore = contextClass.getMethod("getBlobStore").invoke(context);
            Class<?> blobStoreClass = loader.loadClass("org.jclouds.blobstore.BlobStore");
            Class<?> location = loader.loadClass("org.jclouds.domain.Location");
            blobStoreClass.getMethod("createContainerInLocation", location, String.class).invoke(blobStore, null, BUCKET);

            Class<?> s3Proxy = loader.loadClass("org.gaul.s3proxy.S3Proxy");
            Object proxyBuilder = s3Proxy.getMethod("builder").invoke(null);
            Class<?> proxyBuilderClass = proxyBuilder.getClass();
            proxyBuilderClass.getMethod("blobStore", blobStoreClass).invoke(proxyBuilder, blobStore);
            proxyBuilderClass.getMethod("endpoint", URI.class).invoke(proxyBuilder, URI.create("http://127.0.0.1:0"));
            @SuppressWarnings({"unchecked", "rawtypes"})
            Object auth = Enum.valueOf((Class) loader.loadClass("org.gaul.s3proxy.AuthenticationType"), "AWS_V2_OR_V4");
            proxyBuilderClass.getMethod("awsAuthentication", auth.getClass(), String.class, String.class)
                    .invoke(proxyBuilder, auth, IDENTITY, CREDENTIAL);
            Object proxy = proxyBuilderClass.getMethod("build").invoke(proxyBuilder);
            s3Proxy.getMethod("start").invoke(proxy); // returns once Jetty listens
            int port = (int) s3Proxy.getMethod("getPort").invoke(proxy);
            return new S3Server(loader, proxy, context, blobStore, port);
        } catch (InvocationTargetException e) {
            closeQuietly(context, loader);
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        } catch (Exception | Error e) {
            closeQuietly(context, loader);
            throw e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private static URL jar() throws IOException {
        String jar = System.getProperty(JAR_PROPERTY);
        if (jar == null) {
            throw new IllegalStateException("system property " + JAR_PROPERTY + " is not set: run the tests through Maven"
                    + " (maven-dependency-plugin copies S3Proxy's jar-with-dependencies to target/s3proxy/)");
        }
        if (!Files.isRegularFile(Path.of(jar))) {
            throw new IOException(JAR_PROPERTY + ": no file " + jar);
        }
        return Path.of(jar).toUri().toURL();
    }

    /** The endpoint, http://127.0.0.1:PORT. */
    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    /**
     * The keys of the multipart uploads begun and neither completed nor aborted, whose key
     * starts with {@code prefix}, asked of S3Proxy's store itself: S3Proxy refuses S3A's
     * ListMultipartUploads request (it takes no {@code max-uploads}).
     */
    public List<String> pendingUploads(String prefix) throws Exception {
        List<String> keys = new ArrayList<>();
        Class<?> store = loader.loadClass("org.jclouds.blobstore.BlobStore");
        // Through the interface: the uploads' own class (AutoValue_MultipartUpload) is not public.
        java.lang.reflect.Method blobName = loader.loadClass("org.jclouds.blobstore.domain.MultipartUpload")
                .getMethod("blobName");
        for (Object upload : (List<?>) store.getMethod("listMultipartUploads", String.class).invoke(blobStore, BUCKET)) {
            String key = (String) blobName.invoke(upload);
            if (key.startsWith(prefix)) {
                keys.add(key);
            }
        }
        return keys;
    }

    /**
     * Flips the bits of the stored byte at {@code offset} of object {@code key} in S3Proxy's store
     * itself, keeping the object's user metadata (an encryption client's wrapped key): what an
     * attacker with write access to the bucket can do.
     */
    public void flipStoredByte(String key, long offset) throws Exception {
        Class<?> store = loader.loadClass("org.jclouds.blobstore.BlobStore");
        Object blob = store.getMethod("getBlob", String.class, String.class).invoke(blobStore, BUCKET, key);
        if (blob == null) {
            throw new IOException("no object " + key);
        }
        Object payload = blob.getClass().getMethod("getPayload").invoke(blob);
        byte[] bytes;
        try (java.io.InputStream in = (java.io.InputStream) payload.getClass().getMethod("openStream").invoke(payload)) {
            bytes = in.readAllBytes();
        }
        bytes[Math.toIntExact(offset)] ^= (byte) 0xff;
        Object metadata = blob.getClass().getMethod("getMetadata").invoke(blob);
        @SuppressWarnings("unchecked")
        Map<String, String> user = (Map<String, String>) metadata.getClass().getMethod("getUserMetadata").invoke(metadata);
        Object builder = store.getMethod("blobBuilder", String.class).invoke(blobStore, key);
        Class<?> builderClass = loader.loadClass("org.jclouds.blobstore.domain.BlobBuilder");
        builder = builderClass.getMethod("userMetadata", Map.class).invoke(builder, user);
        Object withPayload = builderClass.getMethod("payload", byte[].class).invoke(builder, (Object) bytes);
        Object built = withPayload.getClass().getMethod("build").invoke(withPayload);
        store.getMethod("putBlob", String.class, loader.loadClass("org.jclouds.blobstore.domain.Blob"))
                .invoke(blobStore, BUCKET, built);
    }

    /**
     * S3A's settings for this server: its endpoint, path-style requests, the test identity, no
     * TLS, a region so that the SDK does not look for one, and a failure shown at once rather
     * than after retries.
     */
    public Map<String, String> s3aSettings() {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("fs.s3a.endpoint", endpoint());
        settings.put("fs.s3a.endpoint.region", "us-east-1");
        settings.put("fs.s3a.path.style.access", "true");
        settings.put("fs.s3a.connection.ssl.enabled", "false");
        settings.put("fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
        settings.put("fs.s3a.access.key", IDENTITY);
        settings.put("fs.s3a.secret.key", CREDENTIAL);
        settings.put("fs.s3a.bucket.probe", "0");
        settings.put("fs.s3a.attempts.maximum", "1");
        settings.put("fs.s3a.retry.limit", "1");
        return settings;
    }

    /** {@link #s3aSettings()} set in {@code conf}. */
    public void configure(Configuration conf) {
        s3aSettings().forEach(conf::set);
    }

    /** Stops the server and releases its class loader (and the objects it held). */
    @Override
    public void close() throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            Method stop = proxy.getClass().getMethod("stop");
            stop.invoke(proxy);
        } finally {
            thread.setContextClassLoader(previous);
            closeQuietly(blobStoreContext, loader);
        }
    }

    private static void closeQuietly(Object context, URLClassLoader loader) {
        try {
            if (context != null) {
                ((AutoCloseable) context).close();
            }
        } catch (Exception e) {
            // stopping: nothing more to do
        }
        try {
            loader.close();
        } catch (IOException e) {
            // stopping: nothing more to do
        }
    }
}
