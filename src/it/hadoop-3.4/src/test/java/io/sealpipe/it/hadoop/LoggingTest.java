package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.CryptoCodec;
import org.apache.hadoop.crypto.Encryptor;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A Hadoop 3.4 application that declares sealpipe first among its dependencies (as this project
 * does) keeps Hadoop's logging: sealpipe's SLF4J is optional, so Maven resolves Hadoop's pair,
 * slf4j-api 1.7 and its binding slf4j-reload4j 1.7, and both Hadoop's lines and sealpipe's reach
 * reload4j. When sealpipe brought slf4j-api 2.x, the nearer version won, SLF4J 2 ignored the 1.7
 * binding (no {@code SLF4JServiceProvider}) and every logger, Hadoop's too, was the no-op one.
 *
 * <p>One codec made through Hadoop's {@code CryptoCodec.getInstance} logs both lines: Hadoop's
 * {@code PerformanceAdvisory} names the codec (DEBUG) and sealpipe's {@code Engines} its engine
 * (INFO, once per JVM: surefire runs each test class in a JVM of its own). {@link Logs} collects
 * them with a reload4j appender; sealpipe's line names {@code Engines}, not sealpipe's logging
 * facade, as its location ({@code %C} in a pattern).
 */
class LoggingTest {
    private static final String CODEC_CLASSES =
            CommonConfigurationKeysPublic.HADOOP_SECURITY_CRYPTO_CODEC_CLASSES_AES_CTR_NOPADDING_KEY;
    private static final String SEALPIPE_CODEC = SealpipeAesCtrCryptoCodec.class.getName();
    private static final String ENGINES = "io.sealpipe.engine.Engines";
    /** slf4j-reload4j 1.7's factory (its 2.x, which Hadoop does not ship, has another package). */
    private static final String RELOAD4J_FACTORY = "org.slf4j.impl.Reload4jLoggerFactory";

    @Test
    void hadoopKeepsItsReload4jBindingAndSealpipeLogsThroughIt() throws Exception {
        Logs.install();
        int mark = Logs.mark();
        Configuration conf = new Configuration(false);
        conf.set(CODEC_CLASSES, SEALPIPE_CODEC);
        byte[] key = new byte[16];
        try (CryptoCodec codec = CryptoCodec.getInstance(conf)) {
            assertEquals(SEALPIPE_CODEC, codec.getClass().getName(), "the codec Hadoop made");
            Encryptor encryptor = codec.createEncryptor();
            encryptor.init(key, new byte[16]); // sealpipe chooses its engine here
            ByteBuffer in = ByteBuffer.allocateDirect(64);
            ByteBuffer out = ByteBuffer.allocateDirect(64);
            encryptor.encrypt(in, out);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
        List<Logs.Line> lines = Logs.since(mark);

        String factory = LoggerFactory.getILoggerFactory().getClass().getName();
        assertAll("logging on the class path of a Hadoop 3.4 application with sealpipe declared first (lines: "
                        + lines + ")",
                () -> assertTrue(jarOf(LoggerFactory.class).startsWith("slf4j-api-1.7."),
                        "Hadoop's slf4j-api 1.7, not another version: " + jarOf(LoggerFactory.class)),
                () -> assertEquals(RELOAD4J_FACTORY, factory, "SLF4J's binding is Hadoop's, reload4j"),
                () -> assertTrue(lines.stream().anyMatch(l ->
                                l.logger().equals("org.apache.hadoop.util.PerformanceAdvisory")
                                && l.message().equals(Logs.CODEC_USED + SEALPIPE_CODEC + ".")),
                        "Hadoop's line (CryptoCodec naming the codec it made) reached reload4j"),
                () -> assertTrue(lines.stream().anyMatch(l -> l.logger().equals(ENGINES)
                                && l.message().startsWith(Logs.ENGINE_LINE) && l.locationClass().equals(ENGINES)),
                        "sealpipe's line (its engine) reached reload4j, with Engines as its location"));
    }

    /** The file name of the jar {@code type} was loaded from. */
    private static String jarOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).getFileName().toString();
    }
}
