package io.sealpipe.iceberg;

import java.util.Map;

/** Run by {@link WithoutHadoopTest} in a child JVM whose class path has Iceberg but no Hadoop. */
public final class NoHadoopProbe {
    private NoHadoopProbe() {
    }

    public static void main(String[] args) {
        SealedFileIO io = new SealedFileIO();
        try {
            io.initialize(Map.of(SealedFileIO.IO_IMPL, MemoryFileIO.class.getName()));
            System.out.println("initialized");
        } catch (RuntimeException | LinkageError e) {
            System.out.println(e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
