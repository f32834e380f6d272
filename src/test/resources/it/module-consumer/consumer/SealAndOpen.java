package consumer;

import io.sealpipe.AesKey;
import io.sealpipe.gcm.GcmStreams;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Random;

/**
 * Run by ModuleConsumerIT on the module path, with {@code -Dsealpipe.engine=ENGINE}: seals a GCM
 * message of several chunks and opens it, and tries to reach io.sealpipe.internal by reflection.
 * Prints one fact a line; an unexpected failure ends it with the exception (exit code 1).
 */
public class SealAndOpen {
    public static void main(String[] args) throws Exception {
        Module sealpipe = GcmStreams.class.getModule();
        System.out.println("sealpipe module: " + sealpipe.getName()
                + (sealpipe.getDescriptor().isAutomatic() ? " (automatic)" : " (explicit)"));

        byte[] data = new byte[100_000]; // several 16 KiB chunks
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
        boolean ok = Arrays.equals(data, opened) && sealed.size() == GcmStreams.ciphertextLength(data.length)
                && !Arrays.equals(Arrays.copyOfRange(sealed.toByteArray(), GcmStreams.HEADER_LENGTH,
                        GcmStreams.HEADER_LENGTH + 64), Arrays.copyOf(data, 64));
        System.out.println("gcm round trip on " + gcm.engine().name() + ": " + (ok ? "ok" : "MISMATCH"));

        // The module boundary at run time: the package is not exported, nor opened.
        Class<?> keyAccess = Class.forName("io.sealpipe.internal.KeyAccess");
        Method withBytes = Arrays.stream(keyAccess.getMethods()).filter(m -> m.getName().equals("withBytes"))
                .findFirst().orElseThrow();
        try {
            withBytes.invoke(null, AesKey.copyOf(key), null);
            System.out.println("KeyAccess.withBytes by reflection: CALLED");
        } catch (InvocationTargetException e) { // reached it: the null Use threw inside
            System.out.println("KeyAccess.withBytes by reflection: CALLED");
        } catch (IllegalAccessException e) {
            System.out.println("KeyAccess.withBytes by reflection: " + e.getClass().getSimpleName());
        }
        try {
            withBytes.setAccessible(true);
            System.out.println("KeyAccess.withBytes setAccessible: ALLOWED");
        } catch (RuntimeException e) { // InaccessibleObjectException
            System.out.println("KeyAccess.withBytes setAccessible: " + e.getClass().getSimpleName());
        }
    }
}
