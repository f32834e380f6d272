package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.FailingLocalFileSystem;
import io.sealpipe.hadoop.SealedFileSystem;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;

/**
 * A directory of its own under {@code target/failing-source} with a JCEKS keystore holding a
 * 256-bit key; the configuration of a {@code LocalJobRunner} job in which {@code file} is a
 * {@link FailingLocalFileSystem} and {@code sfile} a sealed view of it; and a sealed view of
 * Hadoop's plain local file system that reads what the job left.
 */
final class FailingSourceFixture implements Closeable {
    private static final String KEY = "data";

    final java.nio.file.Path dir;
    private final URI keystore;
    /** sfile over Hadoop's own local file system: reads every stored file whole, whatever its name. */
    private final FileSystem reader;

    FailingSourceFixture(String name) throws IOException {
        dir = java.nio.file.Path.of("target", "failing-source", name).toAbsolutePath();
        TestFiles.deleteRecursively(dir);
        Files.createDirectories(dir);
        keystore = URI.create("jceks://file" + dir.resolve("keys.jceks"));
        SealedLocalContract.createKey(keystore, KEY);
        reader = FileSystem.newInstance(URI.create("sfile:///"), sealed(new Configuration()));
    }

    private Configuration sealed(Configuration conf) {
        conf.set("fs.sfile.impl", SealedFileSystem.class.getName());
        conf.setBoolean("fs.sfile.impl.disable.cache", true);
        conf.set(SealedFileSystem.wrapsKey("sfile"), "file");
        conf.set(SealedFileSystem.KEY_PROVIDER_PATH, keystore.toString());
        conf.set(SealedFileSystem.KEY_NAME, KEY);
        return conf;
    }

    /**
     * A local job's configuration, its directories under {@link #dir}, with {@code file} the
     * failing file system (a new instance at each {@code FileSystem.get}: never Hadoop's shared one).
     */
    Configuration jobConf() {
        Configuration conf = sealed(new Configuration());
        conf.set("mapreduce.framework.name", "local");
        conf.set(CommonConfigurationKeysPublic.FS_DEFAULT_NAME_KEY, "file:///");
        conf.set("hadoop.tmp.dir", dir.resolve("tmp").toString());
        conf.set("mapreduce.cluster.local.dir", dir.resolve("local").toString());
        conf.set("fs.file.impl", FailingLocalFileSystem.class.getName());
        conf.setBoolean("fs.file.impl.disable.cache", true);
        // Job.waitForCompletion asks every 5 s by default whether the job is done.
        conf.setInt(Job.COMPLETION_POLL_INTERVAL_KEY, 50);
        return conf;
    }

    /** The sealed view of {@code dir/name}. */
    Path sealedPath(String name) {
        return new Path("sfile://" + dir.resolve(name));
    }

    /** The plaintext of the sealed file {@code dir/name} read to its end, or empty if any read fails. */
    Optional<byte[]> readsWhole(String name) {
        try (InputStream in = reader.open(sealedPath(name))) {
            return Optional.of(in.readAllBytes());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Every file under {@code dir/root} (but checksum files), relative to it; none if it is not there. */
    List<String> files(String root) throws IOException {
        java.nio.file.Path top = dir.resolve(root);
        if (!Files.exists(top)) {
            return List.of();
        }
        try (Stream<java.nio.file.Path> walk = Files.walk(top)) {
            return walk.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().endsWith(".crc"))
                    .map(p -> top.relativize(p).toString()).sorted().toList();
        }
    }

    /** The files under {@code dir/root} that read whole as sealed files: relative path to plaintext. */
    Map<String, byte[]> validFiles(String root) throws IOException {
        Map<String, byte[]> valid = new TreeMap<>();
        for (String file : files(root)) {
            readsWhole(root + "/" + file).ifPresent(plain -> valid.put(file, plain));
        }
        return valid;
    }

    /** {@code plain} is a shorter prefix of {@code source}, of up to the bytes a failing source gives. */
    static void assertShorterPrefix(byte[] source, byte[] plain, String what) {
        assertTrue(plain.length > 0 && plain.length <= FailingLocalFileSystem.FAIL_AFTER,
                what + ": " + plain.length + " bytes");
        assertArrayEquals(Arrays.copyOf(source, plain.length), plain, what + ": the source's bytes before its failure");
    }

    @Override
    public void close() throws IOException {
        reader.close();
    }
}
