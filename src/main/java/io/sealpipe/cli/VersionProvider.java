package io.sealpipe.cli;

import io.sealpipe.engine.Platform;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * {@code sealpipe --version}: the project's version, the commit it was built from, and the
 * libsealpipe this JVM would load (platform, what compiled it, and the SHA-256 of its bytes),
 * all read from resources the build wrote; nothing is loaded.
 */
final class VersionProvider implements IVersionProvider {
    /** The property that names a libsealpipe outside the jar (as NativeLibrary reads it). */
    static final String LIBRARY_PROPERTY = "sealpipe.native.library";

    @Override
    public String[] getVersion() {
        List<String> lines = new ArrayList<>();
        lines.add("sealpipe " + version());
        lines.add("commit " + commit());
        lines.add("native " + nativeLibrary(Platform.current().id(), System.getProperty(LIBRARY_PROPERTY)));
        lines.add("java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ", "
                + System.getProperty("os.arch") + ")");
        return lines.toArray(String[]::new);
    }

    /** The project version this jar was built as, e.g. {@code 0.1.0}. */
    static String version() {
        Properties p = properties("/io/sealpipe/cli/version.properties");
        String v = p.getProperty("version", "");
        return v.isEmpty() || v.startsWith("${") ? "unknown (version.properties is missing from the jar)" : v;
    }

    /** The git commit this jar was built from, {@code <sha>-dirty} from a changed tree, or {@code unknown}. */
    static String commit() {
        try (InputStream in = VersionProvider.class.getResourceAsStream("/io/sealpipe/cli/commit.txt")) {
            String c = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
            return c.isEmpty() ? "unknown" : c;
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    /**
     * The libsealpipe that would load on this platform: the jar's (with what built it) or the
     * file named by {@value #LIBRARY_PROPERTY}, and the SHA-256 of its bytes.
     */
    static String nativeLibrary(String platform, String explicit) {
        if (explicit != null && !explicit.isBlank()) {
            Path file = Path.of(explicit).toAbsolutePath();
            try (InputStream in = Files.newInputStream(file)) {
                return platform + ": libsealpipe from " + file + " (-D" + LIBRARY_PROPERTY + "), sha256 " + sha256(in);
            } catch (IOException e) {
                return platform + ": libsealpipe from " + file + " (-D" + LIBRARY_PROPERTY + "), not readable: " + e;
            }
        }
        String dir = "/META-INF/native/" + platform + "/";
        try (InputStream in = VersionProvider.class.getResourceAsStream(dir + "libsealpipe.so")) {
            if (in == null) {
                return platform + ": no libsealpipe in the jar for this platform (openssl-jna or jce run instead;"
                        + " see sealpipe info)";
            }
            Properties build = properties(dir + "libsealpipe.properties");
            return platform + ": libsealpipe from the jar, built by " + build.getProperty("compiler", "an unknown compiler")
                    + " for " + build.getProperty("target", "an unknown target") + ", sha256 " + sha256(in);
        } catch (IOException e) {
            return platform + ": libsealpipe in the jar is not readable: " + e;
        }
    }

    private static Properties properties(String resource) {
        Properties p = new Properties();
        try (InputStream in = VersionProvider.class.getResourceAsStream(resource)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // An unreadable resource reads as absent: each caller says "unknown".
        }
        return p;
    }

    private static String sha256(InputStream in) throws IOException {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[65536];
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
    }
}
