package io.sealpipe.cli;

import java.io.PrintWriter;
import java.util.Arrays;

/**
 * {@code sealpipe rewrap} in a child JVM of {@link RewrapCommandTest}: {@code stop-at NAME
 * ARGS...} prints "copied NAME" once the file NAME is copied behind its new envelope, before the
 * rename, and then waits for its parent, which kills it there.
 */
final class HookedRewrapChild {
    private HookedRewrapChild() {}

    public static void main(String[] args) {
        String stopAt = args[1];
        TestHooks.install((step, path) -> {
            if (step == TestHooks.Step.REWRAP_COPIED && path.toString().equals(stopAt)) {
                System.out.println("copied " + stopAt);
                System.out.flush();
                for (int b; (b = System.in.read()) >= 0 && b != '\n'; ) {
                    // the parent kills this JVM here
                }
            }
        });
        System.exit(Main.run(Arrays.copyOfRange(args, 2, args.length), new PrintWriter(System.out, true),
                new PrintWriter(System.err, true)));
    }
}
