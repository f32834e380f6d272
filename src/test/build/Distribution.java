import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Run by the build (pom.xml, execution distribution, phase package): the CycloneDX SBOMs and the
 * staging directory of each CLI archive, from one list, so that an SBOM names exactly what its
 * archive holds.
 *
 * <ul>
 *   <li>{@code sealpipe-V-cyclonedx.json}, the library's: sealpipe as metadata.component, and
 *       every artifact of its runtime class path as a component with scope {@code optional}: each
 *       is an optional dependency or reached only through one, so a user's build gets none of
 *       them from sealpipe; they are the versions sealpipe is built and tested with. The provided
 *       ones (Hadoop, Iceberg) are the platform's, and not listed.
 *   <li>for each platform P, {@code target/cli/P/} (lib/ with the sealpipe jar and the CLI's jars,
 *       licenses/ with THIRD-PARTY.txt and the licence and notice files of each jar) and
 *       {@code sealpipe-V-P-cyclonedx.json}, the archive's SBOM: every jar in lib/, scope
 *       {@code required}.
 * </ul>
 *
 * <p>Components are read from the local repository: the path gives group, name, version and
 * classifier; the POM (or its parents') the licences; the file the hashes. No time and no path
 * goes into the output: its timestamp is the build's outputTimestamp and its serial number a
 * name-based UUID of its content, so two builds of a commit write the same bytes. (The
 * cyclonedx-maven-plugin does not run offline, as this build does, and lists pdfbox's test
 * dependencies as required ones.)
 *
 * <p>Arguments: {@code --version V --timestamp T --project-jar JAR --classpath-file FILE --repo DIR
 * --out DIR --cli-exclude g[:a],... --platform P=ACCP_JAR ...}.
 */
public final class Distribution {
    private record Component(String group, String name, String version, String classifier, Path file,
            List<String[]> licenses) {
        String purl() {
            return "pkg:maven/" + group + "/" + name + "@" + version + "?"
                    + (classifier.isEmpty() ? "" : "classifier=" + classifier + "&") + "type=jar";
        }

        String fileName() {
            return name + "-" + version + (classifier.isEmpty() ? "" : "-" + classifier) + ".jar";
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, List<String>> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.computeIfAbsent(args[i], k -> new ArrayList<>()).add(args[i + 1]);
        }
        String version = one(a, "--version");
        String timestamp = one(a, "--timestamp");
        Path projectJar = Path.of(one(a, "--project-jar"));
        Path repo = Path.of(one(a, "--repo")).toAbsolutePath().normalize();
        Path out = Path.of(one(a, "--out"));
        List<String> excludes = List.of(one(a, "--cli-exclude").split(","));

        List<Component> runtime = new ArrayList<>();
        for (String entry : Files.readString(Path.of(one(a, "--classpath-file"))).trim().split(":")) {
            if (!entry.isBlank()) {
                runtime.add(component(repo, Path.of(entry)));
            }
        }
        runtime.sort(Comparator.comparing(Component::purl));
        Component self = new Component("io.sealpipe", "sealpipe", version, "", projectJar,
                List.<String[]>of(new String[] {"Apache-2.0", null}));

        Files.writeString(out.resolve("sealpipe-" + version + "-cyclonedx.json"),
                bom(timestamp, rootOf(self, "library", self.purl()), runtime, "optional"));

        for (String platform : a.getOrDefault("--platform", List.of())) {
            String[] p = platform.split("=", 2);
            List<Component> lib = new ArrayList<>();
            for (Component c : runtime) {
                if (!excluded(c, excludes)) {
                    lib.add(c);
                }
            }
            lib.add(component(repo, Path.of(p[1])));
            lib.sort(Comparator.comparing(Component::purl));
            Path stage = out.resolve("cli").resolve(p[0]);
            deleteTree(stage);
            Path libDir = Files.createDirectories(stage.resolve("lib"));
            Path licenses = Files.createDirectories(stage.resolve("licenses"));
            Files.copy(projectJar, libDir.resolve(self.fileName()));
            StringBuilder thirdParty = new StringBuilder("Third-party components in sealpipe " + version + " for " + p[0]
                    + " (lib/), with their licences.\nEach licence's text is in this directory (see the file named"
                    + " after it); a component's own\nlicence and notice files, where its jar has them, are in"
                    + " licenses/<component>/.\nNative code inside the jars (Snappy, AWS-LC, JNA's stub) and its licences:"
                    + " NATIVE-CODE.txt.\n\n");
            for (Component c : lib) {
                Files.copy(c.file(), libDir.resolve(c.fileName()));
                thirdParty.append(String.format("%-48s %s%n", c.fileName(), licenceLine(c)));
                thirdParty.append(String.format("%-48s   %s%n", "", c.purl()));
                extractNotices(c, licenses.resolve(c.name()));
            }
            Files.writeString(licenses.resolve("THIRD-PARTY.txt"), thirdParty.toString());
            List<Component> shipped = new ArrayList<>(lib);
            shipped.add(0, self);
            String archivePurl = "pkg:maven/io.sealpipe/sealpipe@" + version + "?classifier=" + p[0] + "&type=tar.gz";
            Files.writeString(out.resolve("sealpipe-" + version + "-" + p[0] + "-cyclonedx.json"),
                    bom(timestamp, rootOf(self, "application", archivePurl), shipped, "required"));
        }
    }

    private static String one(Map<String, List<String>> a, String name) {
        List<String> v = a.get(name);
        if (v == null || v.size() != 1) {
            throw new IllegalArgumentException("give " + name + " once");
        }
        return v.get(0);
    }

    private static boolean excluded(Component c, List<String> excludes) {
        for (String e : excludes) {
            String[] ga = e.trim().split(":");
            if (ga[0].equals(c.group()) && (ga.length == 1 || ga[1].equals(c.name()))) {
                return true;
            }
        }
        return false;
    }

    /** A jar of the local repository: group/path/name/version/name-version[-classifier].jar. */
    private static Component component(Path repo, Path jar) throws Exception {
        Path rel = repo.relativize(jar.toAbsolutePath().normalize());
        int n = rel.getNameCount();
        if (rel.startsWith("..") || n < 4) {
            throw new IllegalArgumentException(jar + " is not in the local repository " + repo);
        }
        String name = rel.getName(n - 3).toString();
        String version = rel.getName(n - 2).toString();
        String group = rel.subpath(0, n - 3).toString().replace('/', '.');
        String file = rel.getFileName().toString();
        String prefix = name + "-" + version;
        if (!file.startsWith(prefix) || !file.endsWith(".jar")) {
            throw new IllegalArgumentException(jar + ": not named " + prefix + "[-classifier].jar");
        }
        String rest = file.substring(prefix.length(), file.length() - ".jar".length());
        String classifier = rest.startsWith("-") ? rest.substring(1) : rest;
        return new Component(group, name, version, classifier, jar, licenses(repo, group, name, version, 0));
    }

    /** The POM's licences, else its parent's (name and URL as the POM gives them). */
    private static List<String[]> licenses(Path repo, String group, String name, String version, int depth)
            throws Exception {
        Path pom = repo.resolve(group.replace('.', '/')).resolve(name).resolve(version).resolve(name + "-" + version + ".pom");
        if (depth > 10 || !Files.exists(pom)) {
            return List.of();
        }
        var factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
        Document doc = factory.newDocumentBuilder().parse(pom.toFile());
        Element project = doc.getDocumentElement();
        List<String[]> found = new ArrayList<>();
        for (Element licenses : children(project, "licenses")) {
            for (Element l : children(licenses, "license")) {
                found.add(new String[] {text(l, "name"), text(l, "url")});
            }
        }
        if (!found.isEmpty()) {
            return found;
        }
        for (Element parent : children(project, "parent")) {
            return licenses(repo, text(parent, "groupId"), text(parent, "artifactId"), text(parent, "version"), depth + 1);
        }
        return List.of();
    }

    private static List<Element> children(Element e, String tag) {
        List<Element> r = new ArrayList<>();
        NodeList nodes = e.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i) instanceof Element c && c.getTagName().equals(tag)) {
                r.add(c);
            }
        }
        return r;
    }

    private static String text(Element e, String tag) {
        List<Element> c = children(e, tag);
        return c.isEmpty() ? null : c.get(0).getTextContent().trim();
    }

    /** An SPDX id where the POM's name or URL says it unambiguously; null otherwise (the name is kept). */
    static String spdx(String name, String url) {
        String n = name == null ? "" : name.toLowerCase();
        String u = url == null ? "" : url.toLowerCase();
        if (u.contains("apache.org/licenses/license-2.0") || n.matches("(the )?apache(ware)? (software )?license,? (version )?2\\.0")
                || n.equals("apache-2.0") || n.equals("apache v2") || n.equals("apache license 2.0")) {
            return "Apache-2.0";
        }
        if (n.equals("mit") || n.equals("mit license") || n.equals("the mit license") || u.contains("opensource.org/licenses/mit")) {
            return "MIT";
        }
        if (n.contains("bsd") && (u.contains("bsd-3-clause") || n.contains("3-clause"))) {
            return "BSD-3-Clause";
        }
        // The current LGPL (3) by its URL; "or later" as the one such component (VectorGraphics2D)
        // says in its sources.
        if (n.contains("lesser general public license") && u.endsWith("/lgpl.txt")) {
            return "LGPL-3.0-or-later";
        }
        if (n.contains("lgpl-2.1") || u.contains("lgpl-2.1")) {
            return "LGPL-2.1-or-later";
        }
        return null;
    }

    private static String licenceLine(Component c) {
        if (c.licenses().isEmpty()) {
            throw new IllegalStateException(c.purl() + " names no licence in its POM or its parents': name one by hand");
        }
        List<String> parts = new ArrayList<>();
        for (String[] l : c.licenses()) {
            String id = spdx(l[0], l[1]);
            parts.add(id != null ? id : l[0] + (l[1] == null ? "" : " <" + l[1] + ">"));
        }
        return String.join(" OR ", parts);
    }

    private static final Pattern NOTICE = Pattern.compile("(?i)(META-INF/)?[^/]*(LICEN[CS]E|NOTICE|COPYING)[^/]*");

    /** The jar's own licence and notice files (top level or META-INF), if it has any. */
    private static void extractNotices(Component c, Path dir) throws IOException {
        try (JarFile jar = new JarFile(c.file().toFile())) {
            List<? extends ZipEntry> entries = jar.stream().filter(e -> !e.isDirectory() && NOTICE.matcher(e.getName()).matches())
                    .sorted(Comparator.comparing(ZipEntry::getName)).toList();
            for (ZipEntry e : entries) {
                Files.createDirectories(dir);
                try (InputStream in = jar.getInputStream(e)) {
                    Files.copy(in, dir.resolve(Path.of(e.getName()).getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static String rootOf(Component self, String type, String purl) {
        return "{\"type\":" + q(type) + ",\"bom-ref\":" + q(purl) + ",\"group\":" + q(self.group()) + ",\"name\":"
                + q(self.name()) + ",\"version\":" + q(self.version()) + ",\"licenses\":[{\"license\":{\"id\":\"Apache-2.0\"}}]"
                + ",\"purl\":" + q(purl) + "}";
    }

    /** A CycloneDX 1.6 document; its serial number is a name-based UUID of the rest. */
    private static String bom(String timestamp, String root, List<Component> components, String scope)
            throws Exception {
        StringBuilder body = new StringBuilder();
        body.append("  \"version\" : 1,\n  \"metadata\" : {\n    \"timestamp\" : ").append(q(timestamp))
                .append(",\n    \"component\" : ").append(root).append("\n  },\n  \"components\" : [");
        String sep = "\n";
        List<String> refs = new ArrayList<>();
        for (Component c : components) {
            body.append(sep).append("    {\"type\":\"library\",\"bom-ref\":").append(q(c.purl())).append(",\"group\":")
                    .append(q(c.group())).append(",\"name\":").append(q(c.name())).append(",\"version\":")
                    .append(q(c.version())).append(",\"scope\":").append(q(scope)).append(",\"hashes\":[")
                    .append("{\"alg\":\"SHA-1\",\"content\":").append(q(hash("SHA-1", c.file()))).append("},")
                    .append("{\"alg\":\"SHA-256\",\"content\":").append(q(hash("SHA-256", c.file()))).append("}]")
                    .append(",\"licenses\":[");
            // Several licences in a POM are a choice: one SPDX expression with OR, where each has an
            // id (CycloneDX reads several license entries as all applying).
            List<String> ids = c.licenses().stream().map(l -> spdx(l[0], l[1])).toList();
            if (ids.size() > 1 && !ids.contains(null)) {
                body.append("{\"expression\":").append(q(String.join(" OR ", ids))).append("}");
            } else {
                String lsep = "";
                for (String[] l : c.licenses()) {
                    String id = spdx(l[0], l[1]);
                    body.append(lsep).append("{\"license\":{").append(id != null ? "\"id\":" + q(id) : "\"name\":" + q(l[0]));
                    if (l[1] != null) {
                        body.append(",\"url\":").append(q(l[1]));
                    }
                    body.append("}}");
                    lsep = ",";
                }
            }
            body.append("],\"purl\":").append(q(c.purl())).append("}");
            refs.add(c.purl());
            sep = ",\n";
        }
        String rootRef = root.replaceFirst("(?s).*\"bom-ref\":(\"[^\"]*\").*", "$1");
        body.append("\n  ],\n  \"dependencies\" : [\n    {\"ref\":").append(rootRef).append(",\"dependsOn\":[");
        body.append(String.join(",", refs.stream().map(Distribution::q).toList())).append("]}\n  ]\n}\n");
        UUID serial = UUID.nameUUIDFromBytes(body.toString().getBytes(StandardCharsets.UTF_8));
        return "{\n  \"bomFormat\" : \"CycloneDX\",\n  \"specVersion\" : \"1.6\",\n  \"serialNumber\" : \"urn:uuid:" + serial
                + "\",\n" + body;
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (ch < 0x20) {
                        b.append(String.format("\\u%04x", (int) ch));
                    } else {
                        b.append(ch);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    private static String hash(String alg, Path file) throws IOException, NoSuchAlgorithmException {
        MessageDigest d = MessageDigest.getInstance(alg);
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[65536];
            for (int n; (n = in.read(buf)) > 0; ) {
                d.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(d.digest());
    }

    private static void deleteTree(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var walk = Files.walk(dir)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }
}
