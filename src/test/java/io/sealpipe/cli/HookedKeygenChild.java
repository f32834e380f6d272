package io.sealpipe.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Arrays;

/**
 * The CLI in a child JVM of {@link KeystoreLockTest}, with a test hook its parent drives through
 * the child's standard streams. {@code pause-after-read ARGS...}: once keygen has read the
 * keystore, print "read" and wait for a line on standard input. {@code announce-waiting
 * ARGS...}: print "waiting" when keygen finds the keystore's lock held and waits for it, and
 * "read" once it has read the keystore.
 */
final class HookedKeygenChild {
    private HookedKeygenChild() {}

    public static void main(String[] args) {
        String mode = args[0];
        TestHooks.install((step, path) -> {
            if (mode.equals("pause-after-read") && step == TestHooks.Step.KEYSTORE_READ) {
                say("read");
                for (int b; (b = System.in.read()) >= 0 && b != '\n'; ) {
                    // until the parent says go on
                }
            } else if (mode.equals("announce-waiting") && step == TestHooks.Step.KEYSTORE_WAITING) {
                say("waiting");
            } else if (mode.equals("announce-waiting") && step == TestHooks.Step.KEYSTORE_READ) {
                say("read"); // before the first let go: the lock did not hold it
            }
        });
        System.exit(Main.run(Arrays.copyOfRange(args, 1, args.length), new PrintWriter(System.out, true),
                new PrintWriter(System.err, true)));
    }

    private static void say(String line) throws IOException {
        System.out.println(line);
        System.out.flush();
        if (System.out.checkError()) {
            throw new IOException("the parent is gone");
        }
    }
}
