package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.engine.EngineKind;
import io.sealpipe.gcm.GcmInternals;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory scan of issue 12: after a JVM used keys as an application does and closed and
 * destroyed everything ({@link KeyHeapScanChild}), its heap holds no copy of any key, wiped or
 * collected or not (Epsilon GC: nothing is ever collected, so the dump has every array ever
 * allocated). Searched for: each input key, the GCM message key, and each key XORed with HMAC's
 * inner pad (0x36), as a JCE {@code Mac} keeps it. An AES key schedule kept as {@code int[]}
 * starts with the key itself, and a heap dump writes ints big-endian, so the raw search finds
 * those too. Native memory (OpenSSL's contexts, JNA's argument copies) is not in a heap dump.
 */
class KeyHeapScanTest {

    @Test
    void noKeyIsLeftInTheHeap(@TempDir Path dir) throws IOException, InterruptedException {
        Path dump = dir.resolve("child.hprof");
        List<String> command = ChildJvm.command("-XX:+UnlockExperimentalVMOptions", "-XX:+UseEpsilonGC", "-Xmx1g",
                "-Xlog:disable", "-cp", System.getProperty("java.class.path"), KeyHeapScanChild.class.getName(),
                dump.toString());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(5, TimeUnit.MINUTES), "the child JVM did not exit");
        assertEquals(0, child.exitValue(), output);
        String ran = output.lines().filter(line -> line.startsWith("engines: ")).findFirst()
                .orElseThrow(() -> new AssertionError("the child did not say which engines it ran: " + output))
                .substring("engines: ".length());
        assertTrue(ran.contains(EngineKind.JCE.id()), "the child ran at least JCE: " + output);

        Map<String, byte[]> secrets = new LinkedHashMap<>();
        for (String id : ran.split(",")) {
            EngineKind kind = EngineKind.fromId(id);
            byte[] gcmKey = KeyHeapScanChild.key("gcm", kind, 32);
            byte[] messageKey = GcmInternals.messageKey(gcmKey, KeyHeapScanChild.salt(kind), KeyHeapScanChild.CONTEXT);
            secrets.put(id + " GCM input key", gcmKey);
            secrets.put(id + " GCM message key", messageKey);
            secrets.put(id + " CTR key", KeyHeapScanChild.key("ctr", kind, 32));
            secrets.put(id + " CFB key", KeyHeapScanChild.key("cfb", kind, 16));
            secrets.put(id + " HMAC key", KeyHeapScanChild.key("hmac", kind, 32));
        }
        for (Map.Entry<String, byte[]> e : List.copyOf(secrets.entrySet())) {
            byte[] padded = e.getValue().clone();
            for (int i = 0; i < padded.length; i++) {
                padded[i] ^= 0x36;
            }
            secrets.put(e.getKey() + " XOR ipad", padded);
        }

        byte[] heap = Files.readAllBytes(dump);
        assertFalse(heap.length == 0, "empty heap dump");
        assertEquals(1, count(heap, KeyHeapScanChild.key("canary", EngineKind.JCE, 32)),
                "the canary key, dropped without wiping, is in the dump: it holds collected arrays too");
        List<String> found = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : secrets.entrySet()) {
            int count = count(heap, e.getValue());
            if (count > 0) {
                found.add(e.getKey() + ": " + count);
            }
        }
        assertEquals(List.of(), found, "key copies in the heap of a JVM that closed and destroyed everything");
    }

    private static int count(byte[] haystack, byte[] needle) {
        int count = 0;
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (haystack[i] != needle[0]) {
                continue;
            }
            for (int j = 1; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            count++;
        }
        return count;
    }
}
