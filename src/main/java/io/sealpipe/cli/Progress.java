package io.sealpipe.cli;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The progress bar of {@code encrypt} and {@code decrypt} (me.tongfei:progressbar): bytes read,
 * MB/s and time left, on standard error, for an input file of more than {@link #MIN_BYTES} when
 * standard error is a terminal; never on a pipe or a file, and never with {@code --quiet}.
 */
final class Progress {
    /** Inputs up to this size finish too fast for a bar to help. */
    static final long MIN_BYTES = 4L << 20;

    private Progress() {}

    /** Whether file descriptor 2 is a terminal: on Linux from /proc, elsewhere from System.console(). */
    static boolean stderrIsTerminal() {
        Path fd2 = Path.of("/proc/self/fd/2");
        if (Files.isSymbolicLink(fd2)) {
            try {
                String target = Files.readSymbolicLink(fd2).toString();
                return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
            } catch (IOException | UnsupportedOperationException e) {
                return false;
            }
        }
        return System.console() != null;
    }

    /**
     * {@code in} counted into a progress bar when the input is a file large enough and standard
     * error a terminal; else {@code in} itself.
     */
    static InputStream wrap(InputStream in, String inputPath, String task, boolean quiet) throws IOException {
        if (quiet || Io.isStd(inputPath) || !stderrIsTerminal()) {
            return in;
        }
        long size = Files.size(Path.of(inputPath));
        if (size <= MIN_BYTES) {
            return in;
        }
        ProgressBar bar = new ProgressBarBuilder().setTaskName(task).setInitialMax(size).setUnit(" MB", 1_000_000)
                .showSpeed().setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(200)
                .setConsumer(new ConsoleProgressBarConsumer(new PrintStream(new java.io.FileOutputStream(
                        java.io.FileDescriptor.err), true)))
                .build();
        return new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    bar.step();
                }
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                if (n > 0) {
                    bar.stepBy(n);
                }
                return n;
            }

            @Override
            public void close() throws IOException {
                try {
                    super.close();
                } finally {
                    bar.close();
                }
            }
        };
    }
}
