package io.sealpipe;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.SealedFileSystem;
import io.sealpipe.internal.TextLikeData;
import io.sealpipe.snappy.SnappyStreams;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.SplittableRandom;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * The writer that {@link KilledWriterTest} kills: writes {@link #plain(long)} to {@code file} as
 * {@code kind} in seeded writes of 1 byte to 400 KB (a flush every fifth), printing
 * {@code wrote N} after each write, then {@code closing}, closes, and prints {@code closed}.
 *
 * <p>Arguments: kind ({@code gcm}, {@code snappy-gcm} or {@code sfile}), file, seed, the key in
 * hex, and for {@code sfile} the JCEKS keystore's URI that holds that key as {@code data}.
 */
public final class KilledWriterChild {
    /** The plaintext of every run. */
    static final int SIZE = 6 << 20;

    static byte[] plain(long seed) {
        return TextLikeData.generate(seed, SIZE);
    }

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        Path file = Path.of(args[1]);
        long seed = Long.parseLong(args[2]);
        byte[] key = HexFormat.of().parseHex(args[3]);
        byte[] plain = plain(seed);
        FileSystem fs = null;
        OutputStream out;
        switch (kind) {
            case "gcm" -> out = GcmStreams.builder().key(key).parallelism(2).build()
                    .encrypt(Files.newOutputStream(file));
            case "snappy-gcm" -> out = SnappyStreams.builder().parallelism(2).build()
                    .compress(GcmStreams.builder().key(key).parallelism(2).build()
                            .encrypt(Files.newOutputStream(file)));
            case "sfile" -> {
                fs = FileSystem.get(URI.create("sfile:///"), sealedConf(URI.create(args[4])));
                out = fs.create(new org.apache.hadoop.fs.Path("sfile://" + file.toAbsolutePath()), true);
            }
            default -> throw new IllegalArgumentException(kind);
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (int off = 0, i = 0; off < plain.length; i++) {
            int n = Math.min(plain.length - off, i % 3 == 0 ? 1 + random.nextInt(300) : random.nextInt(400_000));
            out.write(plain, off, n);
            off += n;
            if (i % 5 == 4) {
                out.flush();
            }
            System.out.println("wrote " + off);
        }
        System.out.println("closing");
        out.close();
        if (fs != null) {
            fs.close();
        }
        System.out.println("closed");
    }

    /** sfile over file, its key {@code data} in the keystore at {@code keystore}. */
    static Configuration sealedConf(URI keystore) {
        Configuration conf = new Configuration(false);
        conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
        conf.setBoolean("fs.sfile.impl.disable.cache", true);
        conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, "data");
        return conf;
    }
}
