/**
 * sealpipe: AES-CTR and chunked AES-GCM streams on OpenSSL (JNI or JNA), the JCE or ACCP, with
 * adapters for Hadoop, Apache Iceberg and Apache Commons Crypto.
 *
 * <p>Exports the packages whose {@code package-info.java} describes an API; not
 * {@code io.sealpipe.internal} (key bytes, shared implementation), {@code io.sealpipe.internal.hadoop},
 * {@code io.sealpipe.internal.sealed} or {@code io.sealpipe.cli}. Every other library is optional ({@code requires static}): a feature's
 * jar goes on the class path, or on the module path resolved with {@code --add-modules}
 * (docs/security.md, "The module boundary"; README, "Use it as a library").
 */
// Several of these modules are automatic, and six have only the names the JVM derives from their
// jars' file names (snappy.java, commons.crypto, the three hadoop.*, iceberg.core): Maven warns that such a descriptor
// should not be published. It holds here because every one is "requires static": nothing needs
// them to resolve io.sealpipe or to compile against it, so a new name cannot break a consumer.
// On the module path a renamed snappy-java is still read (OptionalDependency.readFrom); Hadoop
// does not run on the module path at all (hadoop-shaded-protobuf_3_25's derived name is invalid,
// and guava and failureaccess hold one package), so io.sealpipe.hadoop runs on the class path.
// Not "requires static transitive", though Hadoop's and Commons Crypto's types are in the API of
// io.sealpipe.hadoop and io.sealpipe.commons: javac would then demand those modules to compile
// any consumer; those classes say @SuppressWarnings("exports") instead.
@SuppressWarnings("requires-automatic")
module io.sealpipe {
    exports io.sealpipe;
    exports io.sealpipe.gcm;
    exports io.sealpipe.ctr;
    exports io.sealpipe.snappy;
    exports io.sealpipe.engine;
    exports io.sealpipe.engine.openssl;
    exports io.sealpipe.engine.jna;
    exports io.sealpipe.engine.jce;
    exports io.sealpipe.engine.accp;
    exports io.sealpipe.commons;
    exports io.sealpipe.hadoop;
    exports io.sealpipe.iceberg;

    // sun.misc.Unsafe reads a direct buffer's address where neither libsealpipe nor JNA has
    // loaded (io.sealpipe.internal.Buffers, docs/engines.md): a plain requires, so that a modular
    // application resolves it as a class-path one has it. Every JDK image has it; jlink adds it.
    requires jdk.unsupported;
    // JavaRuntime and HeapRegions read the JVM's flags (AES intrinsics, G1's region size) through
    // jdk.management's HotSpotDiagnosticMXBean, where there is one: java.management binds it as
    // its service provider when the JVM starts; without it, they assume the defaults.
    requires java.management;
    requires static jdk.management;

    // Logging: the application's SLF4J (1.7 or 2.x), else the JDK's System.Logger.
    requires static org.slf4j;
    // Engines: openssl-jna and accp.
    requires static com.sun.jna;
    requires static com.amazon.corretto.crypto.provider;
    // SnappyStreams. snappy-java names no module: this is the name derived from its jar's name.
    requires static snappy.java;
    // io.sealpipe.commons: Commons Crypto names no module either (derived from commons-crypto-1.x.jar).
    requires static commons.crypto;
    // io.sealpipe.hadoop: Hadoop's jars name no module (derived from hadoop-common-3.x.jar and so on).
    requires static hadoop.common;
    requires static hadoop.mapreduce.client.core;
    requires static hadoop.aws;
    // io.sealpipe.iceberg: Iceberg's jars name no module either (derived from iceberg-core-1.x.jar).
    // iceberg-api shares its packages, so no module path holds both: the build patches api's
    // classes into this one (pom.xml), and Iceberg runs on the class path, as Hadoop does.
    requires static iceberg.core;
    // io.sealpipe.hadoop.AwsEnvelopeKms: the AWS SDK v2.
    requires static software.amazon.awssdk.services.kms;
    requires static software.amazon.awssdk.http.apache;
    requires static software.amazon.awssdk.auth;
    requires static software.amazon.awssdk.awscore;
    requires static software.amazon.awssdk.core;
    requires static software.amazon.awssdk.http;
    requires static software.amazon.awssdk.regions;
    // The command-line tool (io.sealpipe.cli, not exported).
    requires static info.picocli;
    requires static com.fasterxml.jackson.databind;
    requires static org.knowm.xchart;
    requires static me.tongfei.progressbar;
    requires static java.desktop; // the speed chart's fonts and colours

    // picocli reads and sets the commands' annotated fields by reflection.
    opens io.sealpipe.cli to info.picocli;
}
