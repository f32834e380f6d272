package io.sealpipe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built jar as the module {@code io.sealpipe} (src/main/java/module-info.java): an application
 * module that requires it ({@code it/module-consumer}) is compiled against the jar alone on the
 * module path and run there ({@code java --module-path ... -m consumer/...}), where it seals and
 * opens a GCM message on the engine that {@code sealpipe.engine} forces, and cannot call into
 * {@code io.sealpipe.internal} by reflection; a module that imports
 * {@code io.sealpipe.internal.KeyAccess} ({@code it/module-intruder}) does not compile. JNA, an
 * optional dependency, works from the module path and from the class path. Run by
 * maven-failsafe-plugin after {@code package}, which passes the paths.
 */
class ModuleConsumerIT {
    private static final Path JAR = Path.of(property("sealpipe.it.jar"));
    private static final Path JNA = Path.of(property("sealpipe.it.jna"));

    /** The packages whose package-info.java describes an API: exactly these are exported. */
    private static final Set<String> API = Set.of("io.sealpipe", "io.sealpipe.gcm", "io.sealpipe.ctr",
            "io.sealpipe.snappy", "io.sealpipe.engine", "io.sealpipe.engine.openssl", "io.sealpipe.engine.jna",
            "io.sealpipe.engine.jce", "io.sealpipe.engine.accp", "io.sealpipe.commons", "io.sealpipe.hadoop",
            "io.sealpipe.iceberg");

    @TempDir
    Path dir;

    private static String property(String name) {
        return Objects.requireNonNull(System.getProperty(name), name + " is not set: run with mvn verify");
    }

    private record Compilation(boolean success, List<Diagnostic<? extends JavaFileObject>> diagnostics) {
        String describe() {
            return diagnostics.stream().map(d -> d.getCode() + ": " + d.getMessage(Locale.ROOT))
                    .collect(Collectors.joining("\n"));
        }
    }

    /** Compiles the module in test resource folder {@code it/<name>} against the jar on the module path. */
    private Compilation compile(String name, Path out) throws IOException, URISyntaxException {
        Path sources = Path.of(Objects.requireNonNull(ModuleConsumerIT.class.getResource("/it/" + name)).toURI());
        List<Path> files;
        try (Stream<Path> walk = Files.walk(sources)) {
            files = walk.filter(f -> f.toString().endsWith(".java")).collect(Collectors.toList());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager fileManager = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
            List<String> options = List.of("--release", "17", "--module-path", JAR.toString(), "-d", out.toString(),
                    "-Xlint:all");
            boolean ok = javac.getTask(null, fileManager, diagnostics, options, null, fileManager.getJavaFileObjectsFromPaths(files))
                    .call();
            return new Compilation(ok, diagnostics.getDiagnostics());
        }
    }

    private record Run(int exit, String out) {}

    /** Runs the consumer on the module path, after {@code options}; its output and standard error in one. */
    private Run run(Path consumer, List<Path> modulePath, List<String> options) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // From Java 24 on, JNI and JNA print a warning unless the module that loads a library may
        // (JNA from the class path: ALL-UNNAMED; a module not there would be a warning of its own).
        command.add("--enable-native-access=io.sealpipe,ALL-UNNAMED" + (modulePath.contains(JNA) ? ",com.sun.jna" : ""));
        command.addAll(options);
        command.add("--module-path");
        command.add(Stream.concat(Stream.of(JAR, consumer), modulePath.stream()).map(Path::toString)
                .collect(Collectors.joining(File.pathSeparator)));
        command.add("-m");
        command.add("consumer/consumer.SealAndOpen");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).directory(dir.toFile());
        pb.environment().remove("CLASSPATH");
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().remove("OPENSSL_ia32cap");
        Path log = dir.resolve("consumer.log");
        pb.redirectOutput(log.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the consumer did not finish");
        return new Run(p.exitValue(), Files.readString(log));
    }

    private Path compiledConsumer() throws IOException, URISyntaxException {
        Path out = Files.createDirectories(dir.resolve("consumer"));
        Compilation c = compile("module-consumer", out);
        assertTrue(c.success(), "the consumer must compile against the jar alone:\n" + c.describe());
        return out;
    }

    /** The consumer's lines for one engine: it was the one used, the bytes came back, the internals stayed shut. */
    private static void assertSealedAndOpenedOn(String engine, Run run) {
        String out = run.out();
        assertEquals(0, run.exit(), out);
        assertTrue(out.contains("sealpipe module: io.sealpipe (explicit)"), out);
        assertTrue(out.contains("gcm round trip on " + engine + ": ok"), out);
        assertTrue(out.contains("KeyAccess.withBytes by reflection: IllegalAccessException"), out);
        assertTrue(out.contains("KeyAccess.withBytes setAccessible: InaccessibleObjectException"), out);
    }

    @Test
    void theJarIsAModuleThatExportsTheApiOnly() {
        ModuleReference ref = ModuleFinder.of(JAR).findAll().stream().findFirst()
                .orElseThrow(() -> new AssertionError("no module in " + JAR));
        ModuleDescriptor module = ref.descriptor();
        assertEquals("io.sealpipe", module.name());
        assertFalse(module.isAutomatic(), "module-info.class must be in the jar: " + JAR);
        Set<String> exported = module.exports().stream().filter(e -> !e.isQualified()).map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toSet());
        assertEquals(API, exported);
        assertTrue(module.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified), module.exports().toString());
        // Opened only to picocli, which sets the command-line tool's options by reflection.
        assertEquals(Set.of("io.sealpipe.cli"), module.opens().stream().map(ModuleDescriptor.Opens::source)
                .collect(Collectors.toSet()));
        assertTrue(module.packages().containsAll(Set.of("io.sealpipe.internal", "io.sealpipe.internal.hadoop",
                "io.sealpipe.internal.sealed", "io.sealpipe.cli")), module.packages().toString());
        // Every dependency but the JDK's own is optional: the module resolves with the jar alone.
        List<String> mandatory = module.requires().stream()
                .filter(r -> !r.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC))
                .map(ModuleDescriptor.Requires::name).filter(n -> !n.startsWith("java.") && !n.startsWith("jdk."))
                .collect(Collectors.toList());
        assertEquals(List.of(), mandatory);
    }

    @Test
    void sealsAndOpensOnOpensslJniFromTheModulePath() throws Exception {
        Path consumer = compiledConsumer();
        // The native library comes out of the jar's META-INF/native/<platform>/, a resource of the module.
        assertSealedAndOpenedOn("openssl-jni", run(consumer, List.of(), List.of("-Dsealpipe.engine=openssl-jni")));
    }

    @Test
    void sealsAndOpensOnJceFromTheModulePath() throws Exception {
        Path consumer = compiledConsumer();
        assertSealedAndOpenedOn("jce", run(consumer, List.of(), List.of("-Dsealpipe.engine=jce")));
    }

    /** An optional dependency as a module: resolved with --add-modules, it is used; not resolved, it is reported missing. */
    @Test
    void usesJnaFromTheModulePathWhenItIsResolved() throws Exception {
        Path consumer = compiledConsumer();
        assertSealedAndOpenedOn("openssl-jna", run(consumer, List.of(JNA),
                List.of("--add-modules", "com.sun.jna", "-Dsealpipe.engine=openssl-jna")));

        Run unresolved = run(consumer, List.of(JNA), List.of("-Dsealpipe.engine=openssl-jna"));
        assertEquals(1, unresolved.exit(), unresolved.out());
        assertTrue(unresolved.out().contains("JNA is neither on the class path nor a resolved module: add "
                + "net.java.dev.jna:jna (" + property("sealpipe.it.jna.version") + ") to the class path, or to the "
                + "module path with --add-modules com.sun.jna"), unresolved.out());
    }

    /**
     * A module that holds the dependency's package without exporting it cannot serve as the
     * dependency: sealpipe reports JNA missing, as without it, instead of failing on first use
     * with IllegalAccessError.
     */
    @Test
    void aModuleThatHidesTheDependencysPackageIsNotTheDependency() throws Exception {
        Path consumer = compiledConsumer();
        Path src = Files.createDirectories(dir.resolve("hider-src/com/sun/jna"));
        Files.writeString(src.resolve("Native.java"), "package com.sun.jna;\npublic class Native {}\n");
        Files.writeString(dir.resolve("hider-src/module-info.java"), "module hider {}\n");
        Path hider = Files.createDirectories(dir.resolve("hider"));
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, null, "--release", "17", "-d", hider.toString(),
                dir.resolve("hider-src/module-info.java").toString(), src.resolve("Native.java").toString());
        assertEquals(0, rc, "javac of the module hider");

        Run run = run(consumer, List.of(hider), List.of("--add-modules", "hider", "-Dsealpipe.engine=openssl-jna"));
        assertEquals(1, run.exit(), run.out());
        assertFalse(run.out().contains("IllegalAccessError"), run.out());
        assertTrue(run.out().contains("JNA is neither on the class path nor a resolved module"), run.out());
    }

    /** An optional dependency on the class path while sealpipe is on the module path: sealpipe reads it there. */
    @Test
    void usesJnaFromTheClassPath() throws Exception {
        Path consumer = compiledConsumer();
        assertSealedAndOpenedOn("openssl-jna", run(consumer, List.of(),
                List.of("-cp", JNA.toString(), "-Dsealpipe.engine=openssl-jna")));
    }

    @Test
    void aModuleCannotCompileAgainstTheInternals() throws Exception {
        Path out = Files.createDirectories(dir.resolve("intruder"));
        Compilation c = compile("module-intruder", out);
        assertFalse(c.success(), "io.sealpipe.internal must not be exported:\n" + c.describe());
        List<String> errors = c.diagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                .map(d -> d.getCode() + ": " + d.getMessage(Locale.ROOT)).collect(Collectors.toList());
        assertTrue(errors.stream().anyMatch(e -> e.startsWith("compiler.err.package.not.visible: ")
                && e.contains("package io.sealpipe.internal is not visible")
                && e.contains("package io.sealpipe.internal is declared in module io.sealpipe, which does not export it")),
                String.join("\n", errors));
    }
}
