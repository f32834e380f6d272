package io.sealpipe.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code sealpipe} command. Exit codes: 0 success, 1 I/O or crypto failure, 2 bad arguments.
 */
@Command(name = "sealpipe", mixinStandardHelpOptions = true, versionProvider = VersionProvider.class,
        description = "Fast encrypted streams for Hadoop-style storage: keys, encrypt and decrypt, inspect, speed, and the"
                + " engines, CPU and OpenSSL report.",
        subcommands = {InfoCommand.class, KeygenCommand.class, CryptCommand.Encrypt.class, CryptCommand.Decrypt.class,
            InspectCommand.class, RewrapCommand.class, picocli.AutoComplete.GenerateCompletion.class,
            SpeedCommand.class})
public final class Main implements Runnable {
    static final int OK = 0;
    static final int FAILED = 1;
    static final int USAGE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new UsageException(spec.commandLine(), "a command is required");
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the CLI with the given output streams and returns the exit code. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        // The engine decision is part of `info`; keep SLF4J's simple logger quiet on the console.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
                System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        // Hadoop's KMS client (--key-provider kms://) warns with a stack trace on every failed
        // connection; the CLI's own message says what failed and what to check.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.hadoop",
                System.getProperty("org.slf4j.simpleLogger.log.org.apache.hadoop", "error"));
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExitCodeExceptionMapper(e -> e instanceof IllegalArgumentException ? USAGE : FAILED);
        cli.setParameterExceptionHandler((e, a) -> {
            // Never e.getMessage(): picocli's messages repeat the values typed, a key among them.
            err.println("sealpipe: " + UsageErrors.describe(e, a));
            return USAGE;
        });
        cli.setExecutionExceptionHandler((e, c, parsed) -> {
            err.println("sealpipe: " + e.getMessage());
            return e instanceof IllegalArgumentException ? USAGE : FAILED;
        });
        try {
            return cli.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }
}
