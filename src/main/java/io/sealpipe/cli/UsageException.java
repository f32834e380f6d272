package io.sealpipe.cli;

import picocli.CommandLine;

/**
 * A bad command line found by sealpipe's own checks (exit 2). Its message is printed as it is,
 * so it must name options and the allowed values, never a value the user typed: that value may
 * be a key put in the wrong place. Picocli's own messages do repeat values, so
 * {@link UsageErrors} rewrites them instead.
 */
final class UsageException extends CommandLine.ParameterException {
    private static final long serialVersionUID = 1L;

    UsageException(CommandLine commandLine, String message) {
        super(commandLine, message);
    }
}
