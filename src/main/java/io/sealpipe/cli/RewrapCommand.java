package io.sealpipe.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sealpipe rewrap}: wraps the data keys of the sealed file system's envelope files again
 * under their key's current version, without changing any chunk ({@link HadoopRewrap}).
 */
@Command(name = "rewrap", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Wrap the data keys of envelope files (sealpipe.fs.key.mode=envelope) again under their KMS key's"
            + " current version, after `hadoop key roll`: the KMS re-encrypts each data key once (it never leaves the"
            + " KMS), and each file's chunks are copied unchanged behind its new envelope, which replaces the file in one"
            + " rename. A file or a tree of stored files (the wrapped scheme's paths: file:, hdfs:, s3a:...); files that"
            + " are not envelope files are skipped. Needs Hadoop's client on the class path (SEALPIPE_CLASSPATH)."})
final class RewrapCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--key-provider", paramLabel = "URI",
            description = "The Hadoop key provider that wraps the data keys: kms://http@HOST:PORT/kms, or jceks://file/PATH.")
    String provider;

    @Mixin
    KmsOptions kms;

    @Option(names = "--dry-run", description = "Say what would be rewrapped (the KMS re-encrypts each data key, to know),"
            + " and change no file.")
    boolean dryRun;

    @Parameters(arity = "1..*", paramLabel = "PATH", description = "Stored files or directories (Hadoop paths).")
    String[] paths;

    @Override
    public Integer call() throws Exception {
        if (!HadoopProviderKeys.available()) {
            throw new java.io.IOException("rewrap needs Hadoop's client on the class path, which the CLI jar does not"
                    + " hold: SEALPIPE_CLASSPATH=\"$(hadoop classpath)\" ./sealpipe rewrap ...");
        }
        boolean ok = HadoopRewrap.run(KmsOptions.kms(kms, provider, spec.commandLine()), paths, dryRun, spec.commandLine().getOut(), spec.commandLine().getErr());
        return ok ? Main.OK : Main.FAILED;
    }
}
