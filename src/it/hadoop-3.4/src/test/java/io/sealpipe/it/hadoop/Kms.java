package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.NoSuchAlgorithmException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.crypto.key.kms.server.KMSWebApp;
import org.apache.hadoop.crypto.key.kms.server.MiniKMS;

/**
 * Hadoop's KMS server (its {@code MiniKMS}: the KMS web application on an embedded Jetty) in the
 * test JVM, on 127.0.0.1 and a free port, keeping its keystore, configuration and audit log in a
 * directory under {@code target} (left there for a failed run). One runs at a time in a JVM: the
 * KMS keeps its configuration directory in a system property and its metrics in static fields.
 */
final class Kms implements AutoCloseable {
    private final MiniKMS server;
    private final URI uri;

    private Kms(MiniKMS server, URI uri) {
        this.server = server;
        this.uri = uri;
    }

    /** Starts a KMS whose files are in {@code dir} (emptied first). */
    static Kms start(Path dir) throws Exception {
        TestFiles.deleteRecursively(dir);
        Files.createDirectories(dir);
        // The KMS's REST layer (Jersey 1) builds its WADL with JAXB 2.2, whose optimised accessors
        // define classes in java.lang's ClassLoader by reflection, closed on Java 17: plain
        // reflection instead, rather than opening java.base to every class of the test JVM.
        System.setProperty("com.sun.xml.bind.v2.bytecode.ClassTailor.noOptimize", "true");
        MiniKMS server = new MiniKMS.Builder().setKmsConfDir(dir.toFile()).build();
        server.start();
        URL url = server.getKMSUrl();
        // MiniKMS binds "localhost": what it resolved to must be the loopback address the clients use.
        assertEquals("127.0.0.1", java.net.InetAddress.getByName(url.getHost()).getHostAddress(), "the KMS's address");
        return new Kms(server, URI.create("kms://http@127.0.0.1:" + url.getPort() + url.getPath()));
    }

    /** The provider URI clients configure: {@code kms://http@127.0.0.1:PORT/kms}. */
    URI uri() {
        return uri;
    }

    /** A new client of this KMS (Hadoop's {@code KMSClientProvider}); close it after use. */
    KeyProvider client() throws IOException {
        return KeyProviderFactory.get(uri, new Configuration());
    }

    /** Creates key {@code name} of {@code bits} bits in the KMS, as {@code hadoop key create} does. */
    void createKey(String name, int bits) throws IOException {
        KeyProvider provider = client();
        try {
            KeyProvider.Options options = KeyProvider.options(new Configuration());
            options.setBitLength(bits);
            options.setCipher("AES/CTR/NoPadding");
            provider.createKey(name, options);
            provider.flush();
        } catch (NoSuchAlgorithmException e) {
            throw new IOException(e);
        } finally {
            provider.close();
        }
    }

    /**
     * The requests about keys the KMS answered so far in this JVM, as its own metrics count them:
     * its "key calls" (a key's versions, its current version) and "admin calls" (its metadata, and
     * creating, rolling and deleting keys).
     */
    static long calls() {
        return KMSWebApp.getKeyCallsMeter().getCount() + KMSWebApp.getAdminCallsMeter().getCount();
    }

    /** Stops the server; clients then fail to connect. */
    void stop() {
        server.stop();
    }

    @Override
    public void close() {
        stop();
    }

    /** A directory for {@code test}'s KMS under {@code target}. */
    static Path dir(String test) {
        return new File("target/kms/" + test).getAbsoluteFile().toPath();
    }
}
