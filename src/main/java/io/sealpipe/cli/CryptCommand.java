package io.sealpipe.cli;

import io.sealpipe.CtrStreams;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code sealpipe encrypt} and {@code sealpipe decrypt}: one file or pipe through a stream. */
abstract class CryptCommand implements Callable<Integer> {

    @Mixin
    CipherOptions options;

    abstract boolean encrypting();

    @Override
    public Integer call() throws IOException {
        byte[] key = options.keyBytes();
        CtrStreams streams;
        try {
            streams = CtrStreams.builder().key(key).iv(options.iv()).engine(options.engine()).build();
        } finally {
            Arrays.fill(key, (byte) 0);
        }
        try (InputStream rawIn = open(options.in); Io.Output output = create(options.out)) {
            try (InputStream in = encrypting() ? rawIn : streams.decrypt(rawIn);
                    OutputStream out = encrypting() ? streams.encrypt(output.stream) : output.stream) {
                Io.copy(in, out);
            }
            output.commit();
        } finally {
            streams.destroy();
        }
        return Main.OK;
    }

    private static InputStream open(String path) throws IOException {
        try {
            return Io.openInput(path);
        } catch (IOException e) {
            throw new IOException("cannot read input " + path + ": " + Io.describe(e), e);
        }
    }

    private static Io.Output create(String path) throws IOException {
        try {
            return new Io.Output(path);
        } catch (IOException e) {
            throw new IOException("cannot write output " + path + ": " + Io.describe(e), e);
        }
    }

    @Command(name = "encrypt", mixinStandardHelpOptions = true,
            description = "Encrypt IN (or standard input) to OUT (or standard output).")
    static final class Encrypt extends CryptCommand {
        @Override
        boolean encrypting() {
            return true;
        }
    }

    @Command(name = "decrypt", mixinStandardHelpOptions = true,
            description = "Decrypt IN (or standard input) to OUT (or standard output).")
    static final class Decrypt extends CryptCommand {
        @Override
        boolean encrypting() {
            return false;
        }
    }
}
