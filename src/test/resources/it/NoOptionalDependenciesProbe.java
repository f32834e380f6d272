import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineUnavailableException;
import io.sealpipe.engine.Engines;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.snappy.SnappyStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

/**
 * What a project that depends on sealpipe alone gets: run by OptionalDependenciesIT with Java's
 * source launcher and a class path of only the sealpipe jar, with or without slf4j-api (no JNA,
 * no snappy-java). Prints one fact a line for the test to check; an unexpected failure ends it
 * with the exception (exit code 1). The argument is an empty directory to write into.
 */
public class NoOptionalDependenciesProbe {
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        System.out.print(Engines.report().describe());
        System.out.println("base engine: " + Engines.report().chosen().map(EngineKind::id).orElse("none"));

        byte[] data = new byte[100_000]; // several GCM chunks
        new Random(42).nextBytes(data);
        byte[] key = new byte[32];
        new Random(7).nextBytes(key);

        GcmStreams gcm = GcmStreams.builder().key(key).build();
        ByteArrayOutputStream sealed = new ByteArrayOutputStream();
        try (OutputStream out = gcm.encrypt(sealed)) {
            out.write(data);
        }
        byte[] opened;
        try (InputStream in = gcm.decrypt(new ByteArrayInputStream(sealed.toByteArray()))) {
            opened = in.readAllBytes();
        }
        System.out.println("gcm round trip on " + gcm.engine().name() + ": "
                + (Arrays.equals(data, opened) ? "ok" : "MISMATCH"));

        CtrStreams ctr = CtrStreams.builder().key(key).iv(new byte[16]).build();
        ByteArrayOutputStream encrypted = new ByteArrayOutputStream();
        try (OutputStream out = ctr.encrypt(encrypted)) {
            out.write(data);
        }
        byte[] decrypted;
        try (InputStream in = ctr.decrypt(new ByteArrayInputStream(encrypted.toByteArray()))) {
            decrypted = in.readAllBytes();
        }
        System.out.println("ctr round trip on " + ctr.engine().name() + ": "
                + (Arrays.equals(data, decrypted) && !Arrays.equals(data, encrypted.toByteArray()) ? "ok" : "MISMATCH"));

        try {
            System.out.println("openssl-jna: " + Engines.get(EngineKind.OPENSSL_JNA).kind().id());
        } catch (EngineUnavailableException e) {
            System.out.println("openssl-jna: " + e.getMessage());
        }
        try {
            System.out.println("accp: " + Engines.get(EngineKind.ACCP).kind().id());
        } catch (EngineUnavailableException e) {
            System.out.println("accp: " + e.getMessage());
        }

        // The pipeline of docs/streams.md ("Compressing, then encrypting"): the failure must come before the file is opened.
        Path file = dir.resolve("compressed.sealed");
        try {
            SnappyStreams snappy = SnappyStreams.builder().build();
            try (OutputStream out = snappy.compress(gcm.encrypt(Files.newOutputStream(file)))) {
                out.write(data);
            }
            System.out.println("snappy: no error");
        } catch (IllegalStateException e) {
            System.out.println("snappy: " + e.getMessage());
        }
        System.out.println("file created: " + Files.exists(file));
    }
}
