package io.sealpipe.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.MaxValuesExceededException;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.MutuallyExclusiveArgsException;
import picocli.CommandLine.OverwrittenOptionException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * One line for a bad command line that repeats nothing the user typed. Picocli's messages quote
 * values ({@code Unmatched arguments from index 0: 'encrpyt', '--key-hex', 'eff9a1…'}, {@code
 * Invalid value for option '--threads': '…' is not an int}), and a value may be a key: a
 * mistyped command or a misplaced option would print it to the terminal, a log or a CI page.
 * These lines name option names, command names and positions only; picocli's "did you mean"
 * suggestions are known names, so they are kept.
 */
final class UsageErrors {
    private UsageErrors() {}

    /** The line for {@code e}, with a hint to the help, without the {@code sealpipe:} prefix. */
    static String describe(ParameterException e, String[] args) {
        CommandLine cli = e.getCommandLine();
        if (e instanceof UnmatchedArgumentException u && !u.isUnknownOption() && cli.getParent() == null) {
            return "unknown command" + at(u, args) + suggestions(u) + ": run '" + cli.getCommandName()
                    + " --help' for the commands";
        }
        return reason(e, args) + " (see: " + cli.getCommandSpec().qualifiedName() + " --help)";
    }

    private static String reason(ParameterException e, String[] args) {
        if (e instanceof UsageException) {
            return e.getMessage();
        }
        CommandLine cli = e.getCommandLine();
        if (e instanceof UnmatchedArgumentException u) {
            return u.isUnknownOption() ? "unknown option" + at(u, args) + suggestions(u)
                    : "too many arguments" + at(u, args);
        }
        if (e instanceof MissingParameterException m) {
            List<String> names = new ArrayList<>();
            boolean given = false;
            for (ArgSpec spec : m.getMissing()) {
                names.add(name(spec));
                given |= spec.isOption() && isGiven((OptionSpec) spec, args);
            }
            ArgSpec first = m.getMissing().isEmpty() ? null : m.getMissing().get(0);
            if (!given && first != null && first.group() != null && first.group().exclusive()) {
                // A group inside the exclusive one (--keystore with --key-alias), by its first option.
                first.group().subgroups().forEach(g -> g.options().stream().findFirst()
                        .filter(o -> !names.contains(o.longestName())).ifPresent(o -> names.add(o.longestName())));
            }
            return given ? names.get(0) + " needs a value (" + m.getMissing().get(0).paramLabel() + ")"
                    : "required: " + String.join(" or ", names);
        }
        if (e instanceof MutuallyExclusiveArgsException || e instanceof MaxValuesExceededException) {
            return "give only one of " + groups(cli) + ", once";
        }
        if (e instanceof OverwrittenOptionException o) {
            return name(o.getOverwritten()) + " is given more than once";
        }
        ArgSpec spec = e.getArgSpec();
        if (spec != null) {
            return "invalid value for " + name(spec) + expected(spec);
        }
        return "invalid command line";
    }

    /** " at argument N" (1 for the first after the program name), or nothing if not found. */
    private static String at(UnmatchedArgumentException u, String[] args) {
        String token = u.getUnmatched().isEmpty() ? null : u.getUnmatched().get(0);
        for (int i = 0; token != null && i < args.length; i++) {
            if (args[i].equals(token)) {
                return " at argument " + (i + 1);
            }
        }
        return "";
    }

    private static String suggestions(UnmatchedArgumentException u) {
        List<String> known = u.getSuggestions();
        return known.isEmpty() ? "" : " (did you mean " + String.join(" or ", known) + "?)";
    }

    private static String name(ArgSpec spec) {
        return spec.isOption() ? ((OptionSpec) spec).longestName() : spec.paramLabel();
    }

    private static boolean isGiven(OptionSpec option, String[] args) {
        for (String arg : args) {
            for (String name : option.names()) {
                if (arg.equals(name) || arg.startsWith(name + "=")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The options of the command's exclusive groups, e.g. "--key-hex or --key-file". */
    private static String groups(CommandLine cli) {
        StringJoiner all = new StringJoiner("; ");
        for (ArgGroupSpec group : cli.getCommandSpec().argGroups()) {
            List<String> names = new ArrayList<>();
            group.options().forEach(o -> names.add(o.longestName()));
            // A group inside (--keystore with --key-alias) by its first option.
            group.subgroups().forEach(g -> g.options().stream().findFirst().ifPresent(o -> names.add(o.longestName())));
            all.add(String.join(" or ", names));
        }
        return all.length() == 0 ? "these options" : all.toString();
    }

    /** ": expected ..." for the types the CLI uses, from the model, never from the value. */
    private static String expected(ArgSpec spec) {
        Class<?> type = spec.type();
        if (type.isEnum()) {
            List<String> names = new ArrayList<>();
            for (Object constant : type.getEnumConstants()) {
                names.add(((Enum<?>) constant).name());
            }
            return ": expected " + String.join(", ", names);
        }
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return ": expected a whole number";
        }
        if (type == double.class || type == Double.class) {
            return ": expected a number";
        }
        return "";
    }
}
