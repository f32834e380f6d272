package io.sealpipe.it.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sealpipe.hadoop.SealpipeAesCtrCryptoCodec;
import io.sealpipe.it.net.Listeners;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.mapreduce.v2.jobhistory.JHAdminConfig;
import org.apache.hadoop.util.JarFinder;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A MiniMRYarnCluster (ResourceManager, two NodeManagers whose containers are JVMs of their own,
 * the job history server) over a MiniDFSCluster (one NameNode, one DataNode), all on this host's
 * loopback (in a network namespace with only the loopback), everything kept under {@code target} so that a failed run
 * can be read: the NameNode's and DataNode's storage in {@code target/<name>}, each NodeManager's
 * local and log dirs (each container's {@code syslog}, {@code stdout} and {@code stderr}, its
 * launch script) in {@code target/test/data/<name>}; both deleted at the next start.
 *
 * <p>The containers do not get this JVM's class path (which has sealpipe): {@link #jobConf} turns
 * off MapReduce's mini-cluster shortcut ({@code yarn.is.minicluster}, which passes it on) and
 * gives them {@link #hadoopClassPath}, this class path without sealpipe's jar and the tests'
 * classes, as {@code mapreduce.application.classpath}: a Hadoop installation without sealpipe.
 * A job ships sealpipe's jar as a user does, with {@code -libjars} ({@link #libjars}), and its
 * own classes in its job jar ({@link #testJobJar}). Each container logs, through the job's own
 * log4j file ({@code mapreduce.job.log4j-properties-file}), sealpipe's INFO lines and Hadoop's
 * {@code PerformanceAdvisory} DEBUG lines (the codec each {@code CryptoCodec.getInstance} made)
 * into its {@code syslog}, for {@link #containerLogs}.
 */
final class YarnCluster implements AutoCloseable {
    static final int NODE_MANAGERS = 2;
    private static final String LOOPBACK = "127.0.0.1";
    static final String MR_APP_MASTER = "org.apache.hadoop.mapreduce.v2.app.MRAppMaster";
    private static final int BLOCK_SIZE = 1024 * 1024;
    /** The containers' log4j: the NodeManager's container-log4j.properties at INFO, and the two loggers the tests read. */
    private static final String CONTAINER_LOG4J = String.join("\n",
            "hadoop.root.logger=INFO,CLA",
            "log4j.rootLogger=${hadoop.root.logger}",
            "log4j.threshold=ALL",
            "log4j.appender.CLA=org.apache.hadoop.yarn.ContainerLogAppender",
            "log4j.appender.CLA.containerLogDir=${yarn.app.container.log.dir}",
            "log4j.appender.CLA.containerLogFile=${hadoop.root.logfile}",
            "log4j.appender.CLA.totalLogFileSize=${yarn.app.container.log.filesize}",
            "log4j.appender.CLA.layout=org.apache.log4j.PatternLayout",
            "log4j.appender.CLA.layout.ConversionPattern=%d{ISO8601} %p [%t] %c: %m%n",
            "log4j.logger.io.sealpipe=INFO",
            "log4j.logger.org.apache.hadoop.util.PerformanceAdvisory=DEBUG",
            "");

    private final Path base;
    private final MiniDFSCluster dfs;
    private final MiniMRYarnCluster yarn;
    private final Path log4j;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final Thread stopAtExit = new Thread(this::stop, "yarn-cluster-stop");

    private YarnCluster(Path base, MiniDFSCluster dfs, MiniMRYarnCluster yarn, Path log4j) {
        this.base = base;
        this.dfs = dfs;
        this.yarn = yarn;
        this.log4j = log4j;
        Runtime.getRuntime().addShutdownHook(stopAtExit);
    }

    /**
     * Starts HDFS, then YARN on it, under {@code target/name}; stops what started if a later part
     * fails. This JVM must run in a network namespace of its own with only the loopback ({@link
     * #assertOnlyLoopbackNetwork}).
     */
    private static YarnCluster start(String name) throws IOException {
        assertOnlyLoopbackNetwork();
        Path base = Path.of("target", name).toAbsolutePath();
        TestFiles.deleteRecursively(base);
        TestFiles.deleteRecursively(Path.of("target", "test", "data", name).toAbsolutePath());
        Files.createDirectories(base);
        Path log4j = Files.writeString(base.resolve("sealpipe-container-log4j.properties"), CONTAINER_LOG4J);

        Configuration conf = MiniHdfs.conf(BLOCK_SIZE);
        MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf, base.resolve("dfs").toFile()).numDataNodes(1).build();
        MiniMRYarnCluster yarn = null;
        try {
            dfs.waitActive();
            conf.set(CommonConfigurationKeysPublic.FS_DEFAULT_NAME_KEY, dfs.getURI().toString());
            // Small containers on two small nodes: at most a few JVMs at once on a small machine.
            conf.setInt(YarnConfiguration.NM_PMEM_MB, 2048);
            conf.setInt(YarnConfiguration.NM_VCORES, 4);
            conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
            // The test JVM's environment may have no JAVA_HOME, which the launch scripts need.
            conf.set(YarnConfiguration.NM_ADMIN_USER_ENV, "JAVA_HOME=" + System.getProperty("java.home"));
            // Keep each finished container's logs (and its directory, for a failed run).
            conf.setLong(YarnConfiguration.DEBUG_NM_DELETE_DELAY_SEC, 3600);
            listenOnLoopback(conf);
            // MiniYARNCluster keeps its dirs (the NodeManagers' local and log dirs) in
            // target/test/data/<name>/yarn-<random> (getTestWorkDir()'s parent).
            yarn = new MiniMRYarnCluster(name, NODE_MANAGERS);
            yarn.init(conf);
            yarn.start();
        } catch (RuntimeException | IOException e) {
            try {
                if (yarn != null) {
                    yarn.stop();
                }
            } finally {
                dfs.shutdown();
            }
            throw e;
        }
        YarnCluster cluster = new YarnCluster(base, dfs, yarn, log4j);
        try {
            // Before any job: the servers of this JVM.
            cluster.assertListenersOnLoopback(Listeners.of(ProcessHandle.current().pid()), Set.of());
        } catch (IOException | RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /**
     * The one cluster of this JVM's YARN test classes, given to a {@code @BeforeAll} method's
     * {@code YarnCluster} parameter: started (as {@code target/yarn-cluster}) by the first class
     * that asks, stopped once every test of the JVM has run (a resource of JUnit's root context).
     * The classes share it, each in directories of its own on HDFS: a cluster's start and stop
     * take about 40 s.
     */
    static final class Shared implements ParameterResolver {
        private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(YarnCluster.class);

        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == YarnCluster.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return context.getRoot().getStore(NAMESPACE)
                    .getOrComputeIfAbsent(Running.class, key -> new Running(startShared()), Running.class).cluster();
        }

        private static YarnCluster startShared() {
            try {
                return start("yarn-cluster");
            } catch (IOException e) {
                throw new UncheckedIOException("the YARN cluster did not start", e);
            }
        }

        /** Closed by JUnit when the root context closes. */
        private record Running(YarnCluster cluster) implements ExtensionContext.Store.CloseableResource {
            @Override
            public void close() {
                cluster.close();
            }
        }
    }

    /**
     * Checks that this JVM's network has no interface up but the loopback, and no address on any
     * other interface: the YARN tests run in a network namespace of their own ({@code
     * src/it/loopback-only/bin/java}, their surefire execution's JVM), which the processes YARN starts
     * inherit. A server bound to the wildcard address is then reached only over the loopback,
     * from this process tree.
     */
    static void assertOnlyLoopbackNetwork() {
        assertEquals(List.of(), Listeners.interfacesBesidesLoopback(), "network interfaces besides the loopback: the"
                + " YARN tests run in a network namespace with only the loopback, started by src/it/loopback-only/bin/java"
                + " as surefire's JVM");
    }

    /**
     * Every server of YARN and the history server that has an address setting on 127.0.0.1 at a
     * port the system picks: the mini clusters' fixed ports (the addresses set here, not this
     * host's name at port 0) and the daemons' bind hosts. Hadoop 3.4.1 has no such setting for
     * four listeners, which bind the wildcard address in its code: the NodeManagers' shuffle
     * service ({@code ShuffleHandler}, {@code new InetSocketAddress(port)}) and the application
     * master's client and task RPC servers ({@code MRClientService}, {@code
     * TaskAttemptListenerImpl}) and web app ({@code WebApps}' default address);
     * {@link #assertListenersOnLoopback} allows only them, which the loopback-only network
     * namespace ({@link #assertOnlyLoopbackNetwork}) keeps off every other interface.
     */
    private static void listenOnLoopback(Configuration conf) {
        conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
        conf.setBoolean(JHAdminConfig.MR_HISTORY_MINICLUSTER_FIXED_PORTS, true);
        for (String address : List.of(YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
                YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, YarnConfiguration.RM_ADMIN_ADDRESS,
                YarnConfiguration.RM_WEBAPP_ADDRESS, YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS,
                YarnConfiguration.NM_ADDRESS, YarnConfiguration.NM_LOCALIZER_ADDRESS,
                YarnConfiguration.NM_WEBAPP_ADDRESS, YarnConfiguration.NM_WEBAPP_HTTPS_ADDRESS,
                YarnConfiguration.NM_COLLECTOR_SERVICE_ADDRESS, YarnConfiguration.TIMELINE_SERVICE_ADDRESS,
                YarnConfiguration.TIMELINE_SERVICE_WEBAPP_ADDRESS, YarnConfiguration.TIMELINE_SERVICE_WEBAPP_HTTPS_ADDRESS,
                JHAdminConfig.MR_HISTORY_ADDRESS, JHAdminConfig.JHS_ADMIN_ADDRESS,
                JHAdminConfig.MR_HISTORY_WEBAPP_ADDRESS, JHAdminConfig.MR_HISTORY_WEBAPP_HTTPS_ADDRESS)) {
            conf.set(address, LOOPBACK + ":0");
        }
        for (String bindHost : List.of(YarnConfiguration.RM_BIND_HOST, YarnConfiguration.NM_BIND_HOST,
                YarnConfiguration.TIMELINE_SERVICE_BIND_HOST, JHAdminConfig.MR_HISTORY_BIND_HOST)) {
            conf.set(bindHost, LOOPBACK);
        }
    }

    /** Stops YARN (its NodeManagers kill the containers still running), then HDFS; also when the JVM exits without {@link #close}. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(stopAtExit);
        } catch (IllegalStateException exiting) {
            // The JVM is exiting: the hook stops the cluster.
        }
        stop();
    }

    private void stop() {
        if (stopped.compareAndSet(false, true)) {
            try {
                yarn.stop();
            } finally {
                dfs.shutdown();
            }
        }
    }

    /**
     * Waits until no application master started by this cluster runs any more: one lingers for
     * a few seconds after its job has finished (Hadoop's MRAppMaster sleeps before it stops its
     * client service), with its listeners open.
     */
    static void awaitNoApplicationMaster() {
        ProcessHandle.current().descendants()
                .filter(p -> p.info().commandLine().map(c -> c.contains(MR_APP_MASTER)).orElse(false))
                .forEach(p -> p.onExit().join());
    }

    /** The ports of the NodeManagers' shuffle services (the service data each gives the containers it starts). */
    Set<Integer> shufflePorts() throws IOException {
        Set<Integer> ports = new TreeSet<>();
        for (int n = 0; n < NODE_MANAGERS; n++) {
            ByteBuffer data = yarn.getNodeManager(n).getNMContext().getAuxServices().getMetaData()
                    .get(ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID);
            ports.add(ShuffleHandler.deserializeMetaData(data.duplicate()));
        }
        return ports;
    }

    /**
     * Checks that every listener of this JVM and the processes it started (the NameNode, the
     * DataNode, the ResourceManager, the NodeManagers, the history server, and any application
     * master or task running) is on 127.0.0.1, but for Hadoop 3.4.1's hard-coded wildcard
     * listeners (see {@link #listenOnLoopback}): the NodeManagers' shuffle ports in this JVM, and
     * in an application master, the listeners whose ports {@code amWildcardPorts} names.
     */
    void assertListenersOnLoopback(List<Listeners.Listener> listeners, Set<Integer> amWildcardPorts) throws IOException {
        long self = ProcessHandle.current().pid();
        Set<Integer> shuffle = shufflePorts();
        List<Listeners.Listener> elsewhere = listeners.stream()
                .filter(l -> !l.onLoopbackAddress())
                .filter(l -> !(l.pid() == self && shuffle.contains(l.port())))
                .filter(l -> !(l.inProcess(MR_APP_MASTER) && amWildcardPorts.contains(l.port())))
                .toList();
        assertEquals(List.of(), elsewhere, () -> "listeners not on 127.0.0.1 (shuffle ports " + shuffle
                + ", the application master's " + amWildcardPorts + ") of " + listeners);
        List<Integer> inThisJvm = listeners.stream().filter(l -> l.pid() == self).map(Listeners.Listener::port).toList();
        assertTrue(inThisJvm.containsAll(shuffle), () -> "the shuffle ports " + shuffle + " are not among " + listeners);
    }

    DistributedFileSystem hdfs() throws IOException {
        return dfs.getFileSystem();
    }

    /** The NameNode's host:port. */
    String authority() {
        return dfs.getURI().getAuthority();
    }

    Path base() {
        return base;
    }

    /**
     * A job's configuration on this cluster: containers with small heaps, this cluster's
     * NodeManagers' class path without sealpipe ({@link #hadoopClassPath}), logs through the
     * job's log4j file.
     */
    Configuration jobConf() {
        Configuration conf = new Configuration(yarn.getConfig());
        conf.setBoolean(YarnConfiguration.IS_MINI_YARN_CLUSTER, false);
        conf.set(MRJobConfig.MAPREDUCE_APPLICATION_CLASSPATH, String.join(",", hadoopClassPath()));
        conf.set(MRJobConfig.MAPREDUCE_JOB_LOG4J_PROPERTIES_FILE, log4j.toUri().toString());
        conf.setInt(MRJobConfig.MR_AM_VMEM_MB, 384);
        conf.set(MRJobConfig.MR_AM_COMMAND_OPTS, "-Xmx256m -XX:+UseSerialGC");
        conf.setInt(MRJobConfig.MAP_MEMORY_MB, 384);
        conf.setInt(MRJobConfig.REDUCE_MEMORY_MB, 384);
        conf.set(MRJobConfig.MAP_JAVA_OPTS, "-Xmx256m -XX:+UseSerialGC");
        conf.set(MRJobConfig.REDUCE_JAVA_OPTS, "-Xmx256m -XX:+UseSerialGC");
        // One attempt per task unless one fails: the tests count the containers of the tasks.
        conf.setBoolean(MRJobConfig.MAP_SPECULATIVE, false);
        conf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, false);
        // Job.waitForCompletion asks every 5 s by default whether the job is done.
        conf.setInt("mapreduce.client.completion.pollinterval", 100);
        return conf;
    }

    /** The {@code -libjars} generic option that ships sealpipe's jar with a job (as {@code hadoop jar ... -libjars} does). */
    static List<String> libjars() {
        return List.of("-libjars", sealpipeJar().toUri().toString());
    }

    /**
     * The jar under test, as the main build wrote it ({@code sealpipe.it.jar}, in its {@code
     * target}): the one the jobs ship and this JVM loaded, not the copy in {@code ~/.m2}, which is
     * whatever a build installed last.
     */
    static Path sealpipeJar() {
        String property = System.getProperty("sealpipe.it.jar");
        if (property == null) {
            throw new IllegalStateException("sealpipe.it.jar is not set: run the tests with mvn verify from the project");
        }
        Path jar = Path.of(property).toAbsolutePath();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("sealpipe.it.jar: no file " + jar + ": build the main project first (mvn package)");
        }
        assertEquals(jar, loadedSealpipeJar(), "the jar this JVM loaded sealpipe from, and the jar the jobs ship");
        return jar;
    }

    /** The jar this JVM loaded sealpipe from (the pom puts the one in target on the class path). */
    private static Path loadedSealpipeJar() {
        try {
            Path jar = Path.of(SealpipeAesCtrCryptoCodec.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            assertTrue(jar.getFileName().toString().endsWith(".jar"), "sealpipe is not loaded from a jar: " + jar);
            return jar;
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A jar of the tests' classes, for a job whose mapper and reducer are here: its job jar. */
    static String testJobJar(Class<?> inTests) {
        return JarFinder.getJar(inTests);
    }

    /**
     * This JVM's class path (expanded from Surefire's manifest-only jar, if that is what it is)
     * without sealpipe's jar and the tests' classes: the Hadoop installation the containers run.
     */
    static List<String> hadoopClassPath() {
        Path sealpipe = loadedSealpipeJar();
        Path testClasses = Path.of("target", "test-classes").toAbsolutePath();
        List<String> entries = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            entries.addAll(expand(entry));
        }
        List<String> hadoop = entries.stream()
                .filter(e -> !Path.of(e).toAbsolutePath().equals(sealpipe) && !Path.of(e).toAbsolutePath().equals(testClasses))
                .filter(e -> !Path.of(e).getFileName().toString().startsWith("sealpipe"))
                .distinct()
                .collect(Collectors.toList());
        assertEquals(entries.size() - 2, hadoop.size(), () -> "sealpipe's jar and the test classes, once each, in " + entries);
        return hadoop;
    }

    /** A class path entry, or the entries of a manifest-only jar's Class-Path. */
    private static List<String> expand(String entry) {
        if (!entry.endsWith(".jar") || !Path.of(entry).getFileName().toString().startsWith("surefirebooter")) {
            return List.of(entry);
        }
        try (JarFile jar = new JarFile(entry)) {
            String classPath = jar.getManifest().getMainAttributes().getValue("Class-Path");
            List<String> entries = new ArrayList<>();
            for (String url : classPath.trim().split("\\s+")) {
                entries.add(Path.of(new java.net.URI(url)).toString());
            }
            return entries;
        } catch (IOException | URISyntaxException e) {
            throw new IllegalStateException("cannot read the class path of " + entry, e);
        }
    }

    /**
     * The logs of the containers of application {@code appId} (for example {@code
     * application_1700000000000_0001}): container id to the text of its {@code syslog} (and
     * {@code stderr} after it), from every NodeManager's log dirs.
     */
    Map<String, String> containerLogs(String appId) {
        Map<String, String> logs = new TreeMap<>();
        // The NodeManagers' dirs are next to MiniYARNCluster's work dir: <name>-logDir-nm-<n>_<m>.
        try (Stream<Path> files = Files.walk(yarn.getTestWorkDir().getParentFile().toPath())) {
            List<Path> appDirs = files.filter(p -> p.getFileName().toString().equals(appId) && Files.isDirectory(p)
                    && p.toString().contains("logDir")).toList();
            for (Path appDir : appDirs) {
                try (Stream<Path> containers = Files.list(appDir)) {
                    for (Path container : containers.sorted().toList()) {
                        StringBuilder text = new StringBuilder();
                        for (String name : List.of("syslog", "stderr")) {
                            Path file = container.resolve(name);
                            if (Files.exists(file)) {
                                text.append(Files.readString(file, StandardCharsets.UTF_8));
                            }
                        }
                        // A NodeManager makes each container's dir in all its log dirs; the container logs into one.
                        logs.merge(container.getFileName().toString(), text.toString(), String::concat);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return logs;
    }

    /** The lines of {@code log} that contain {@code text}. */
    static List<String> lines(String log, String text) {
        return Arrays.stream(log.split("\n")).filter(l -> l.contains(text)).toList();
    }
}
