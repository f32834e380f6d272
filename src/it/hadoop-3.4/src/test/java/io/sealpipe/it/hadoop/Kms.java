package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.key.KeyProvider;
import org.apache.hadoop.crypto.key.KeyProviderFactory;
import org.apache.hadoop.crypto.key.kms.server.KMSAudit;
import org.apache.hadoop.crypto.key.kms.server.KMSWebApp;
import org.apache.hadoop.crypto.key.kms.server.MiniKMS;
import org.apache.log4j.FileAppender;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;

/**
 * Hadoop's KMS server (its {@code MiniKMS}: the KMS web application on an embedded Jetty) in the
 * test JVM, on 127.0.0.1 and a free port, keeping its keystore, configuration and audit log in a
 * directory under {@code target} (left there for a failed run). One runs at a time in a JVM: the
 * KMS keeps its configuration directory in a system property, its ACLs, metrics and audit in
 * static fields, and its audit logger is log4j's {@value #AUDIT_LOGGER}.
 *
 * <p>The audit log is {@value #AUDIT_LOG} in that directory, as a deployed KMS's {@code
 * kms-log4j.properties} writes it (the test JVM's log4j configuration keeps the logger at WARN,
 * so without this nothing of the audit would be kept). The KMS logs an operation when it
 * answers it, before the response is sent, except that it aggregates repeats of {@code
 * GET_KEY_VERSION}, {@code GET_CURRENT_KEY}, {@code GENERATE_EEK}, {@code DECRYPT_EEK} and {@code
 * REENCRYPT_EEK} by one user on one key: the first is logged at once, the count of the rest at
 * the end of the aggregation window. So every kind of operation a user made is in the log by the
 * time that user's call returns.
 */
final class Kms implements AutoCloseable {
    /** The KMS's audit logger's name ({@code KMSAudit.KMS_LOGGER_NAME}). */
    static final String AUDIT_LOGGER = KMSAudit.KMS_LOGGER_NAME;
    /** The audit log's file name in the KMS's directory, as in a deployed KMS. */
    static final String AUDIT_LOG = "kms-audit.log";
    private static final String ACLS = "kms-acls.xml";

    private final MiniKMS server;
    private final URI uri;
    private final Path dir;
    private final FileAppender audit;
    private boolean auditing = true; // until stop()

    private Kms(MiniKMS server, URI uri, Path dir, FileAppender audit) {
        this.server = server;
        this.uri = uri;
        this.dir = dir;
        this.audit = audit;
    }

    /** Starts a KMS whose files are in {@code dir} (emptied first), with MiniKMS's default ACLs (anyone may do anything). */
    static Kms start(Path dir) throws Exception {
        return start(dir, null);
    }

    /**
     * Starts a KMS whose files are in {@code dir} (emptied first), its ACLs {@code acls} (the
     * properties of {@code kms-acls.xml}: {@code hadoop.kms.acl.OP}, {@code key.acl.KEY.OP},
     * ...), or MiniKMS's defaults (anyone may do anything) if null. Key authorization is on, as
     * the KMS has it by default: an operation needs both its {@code hadoop.kms.acl} and the
     * key's ACL.
     */
    static Kms start(Path dir, Configuration acls) throws Exception {
        TestFiles.deleteRecursively(dir);
        Files.createDirectories(dir);
        if (acls != null) {
            // MiniKMS copies its defaults only if there is no kms-acls.xml yet.
            writeAcls(dir, acls, null);
        }
        FileAppender audit = startAuditLog(dir.resolve(AUDIT_LOG));
        // The KMS's REST layer (Jersey 1) builds its WADL with JAXB 2.2, whose optimised accessors
        // define classes in java.lang's ClassLoader by reflection, closed on Java 17: plain
        // reflection instead, rather than opening java.base to every class of the test JVM.
        System.setProperty("com.sun.xml.bind.v2.bytecode.ClassTailor.noOptimize", "true");
        MiniKMS server = new MiniKMS.Builder().setKmsConfDir(dir.toFile()).build();
        try {
            server.start();
            URL url = server.getKMSUrl();
            // MiniKMS binds "localhost": what it resolved to must be the loopback address the clients use.
            assertEquals("127.0.0.1", java.net.InetAddress.getByName(url.getHost()).getHostAddress(), "the KMS's address");
            return new Kms(server, URI.create("kms://http@127.0.0.1:" + url.getPort() + url.getPath()), dir, audit);
        } catch (Exception | Error e) {
            try {
                server.stop();
            } finally {
                stopAuditLog(audit);
            }
            throw e;
        }
    }

    /** Sends the audit logger's lines to {@code file} only, flushed line by line, as a deployed KMS's log4j does. */
    private static FileAppender startAuditLog(Path file) {
        FileAppender appender = new FileAppender();
        appender.setName(AUDIT_LOG);
        appender.setLayout(new PatternLayout("%d{ISO8601} %m%n"));
        appender.setFile(file.toString());
        appender.setAppend(true);
        appender.setImmediateFlush(true);
        appender.setEncoding(StandardCharsets.UTF_8.name());
        appender.activateOptions();
        Logger logger = Logger.getLogger(AUDIT_LOGGER);
        logger.setLevel(Level.INFO);
        logger.setAdditivity(false); // not on the console: build.log stays short
        logger.addAppender(appender);
        return appender;
    }

    private static void stopAuditLog(FileAppender appender) {
        Logger logger = Logger.getLogger(AUDIT_LOGGER);
        logger.removeAppender(appender);
        logger.setLevel(null);
        logger.setAdditivity(true);
        appender.close();
    }

    /**
     * Writes {@code acls} as {@code dir}'s kms-acls.xml in one step (written beside it, then
     * moved over it), so that the KMS's reloader never reads half a file; its modification time
     * {@code mtime} if not null.
     */
    private static void writeAcls(Path dir, Configuration acls, FileTime mtime) throws IOException {
        Path next = dir.resolve(ACLS + ".next");
        try (Writer out = Files.newBufferedWriter(next, StandardCharsets.UTF_8)) {
            acls.writeXml(out);
        }
        if (mtime != null) {
            Files.setLastModifiedTime(next, mtime);
        }
        Files.move(next, dir.resolve(ACLS), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Replaces the KMS's ACLs with {@code acls}, as an administrator edits kms-acls.xml, and has
     * the KMS load them before this returns. The KMS reloads the file from a thread of its own,
     * once a second, when its modification time is more than 100 ms after the last load
     * ({@code KMSACLs.run}, {@code KMSConfiguration.isACLsFileNewer}); here the file's time is
     * set an hour ahead, so that the load this method runs itself ({@code KMSACLs.run}, public)
     * always finds it newer, whatever the reloader did meanwhile: no waiting on the reloader's
     * period. (The reloader then loads the same file again each second, which changes nothing.)
     */
    void setAcls(Configuration acls) throws IOException {
        writeAcls(dir, acls, FileTime.fromMillis(System.currentTimeMillis() + 3_600_000L));
        KMSWebApp.getACLs().run();
    }

    /** One line of the audit log: its status (OK, UNAUTHORIZED, ...), operation, key and user, null where absent. */
    record AuditEntry(String status, String op, String key, String user, String line) {}

    private static final Pattern AUDIT_ENTRY = Pattern.compile("\\b(OK|UNAUTHORIZED|UNAUTHENTICATED|ERROR)\\[([^\\]]*)\\]");

    /** The audit log's file. */
    Path auditLog() {
        return dir.resolve(AUDIT_LOG);
    }

    /** The audit log's entries so far (each line is flushed as it is logged). */
    List<AuditEntry> audit() throws IOException {
        List<AuditEntry> entries = new ArrayList<>();
        for (String line : Files.readAllLines(auditLog(), StandardCharsets.UTF_8)) {
            Matcher m = AUDIT_ENTRY.matcher(line);
            if (!m.find()) {
                continue;
            }
            String op = null;
            String key = null;
            String user = null;
            for (String field : m.group(2).split(", ")) {
                int eq = field.indexOf('=');
                if (eq < 0) {
                    continue;
                }
                String value = field.substring(eq + 1);
                switch (field.substring(0, eq)) {
                    case "op" -> op = value;
                    case "key" -> key = value;
                    case "user" -> user = value;
                    default -> { } // accessCount, interval
                }
            }
            entries.add(new AuditEntry(m.group(1), op, key, user, line));
        }
        return entries;
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

    /**
     * The {@code GENERATE_EEK} requests the KMS answered so far, as its own meter counts them:
     * one per request, however many wrapped keys it asked for (Hadoop's KMS client fetches them
     * in batches for its queue, {@code hadoop.security.kms.client.encrypted.key.cache.*}). Only
     * those granted: the meter is marked after the ACL check.
     */
    static long generateEekCalls() {
        return KMSWebApp.getGenerateEEKCallsMeter().getCount();
    }

    /**
     * The {@code DECRYPT_EEK} requests the KMS received so far: its meter is marked before the
     * ACL check, so refused ones count too.
     */
    static long decryptEekCalls() {
        return KMSWebApp.getDecryptEEKCallsMeter().getCount();
    }

    /** The requests the KMS refused for a missing {@code hadoop.kms.acl} (not those a key's ACL refused). */
    static long unauthorizedCalls() {
        return KMSWebApp.getUnauthorizedCallsMeter().getCount();
    }

    /** Stops the server; clients then fail to connect. */
    void stop() {
        try {
            server.stop();
        } finally {
            if (auditing) {
                auditing = false;
                stopAuditLog(audit);
            }
        }
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
