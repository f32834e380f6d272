package io.sealpipe.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the command line in this JVM, as the tests of this package do, and keeps what it printed. */
final class CliRun {
    private CliRun() {}

    /** The exit code and what went to standard output and standard error. */
    record Result(int code, String out, String err) {}

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err));
        return new Result(code, out.toString(), err.toString());
    }
}
