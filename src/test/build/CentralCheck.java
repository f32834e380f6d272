import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Checks a release as Maven Central would take it: opens the repository that `mvn -Prelease
 * deploy` wrote (a file repository) and fails, listing every problem, unless the release's
 * directory holds the main jar, the sources jar, the Javadoc jar and the POM, and for each
 * artifact there (the attached ones too, whatever they are) a signature (.asc) that gpg verifies
 * and the .md5 and .sha1 checksums with the right digests; and unless the POM has every field
 * Central requires (name, description, url, licenses, developers, scm). A single-file program
 * (java CentralCheck.java ...), run by the release profile after deploy.
 *
 * <p>Usage: {@code java CentralCheck.java --repository DIR --group G --artifact A --version V
 * [--gpg gpg] [--key FINGERPRINT-OR-ID] [--bundle ZIP]}. gpg verifies with the keyring of its
 * GNUPGHOME. With --key, each signature must also be made by that key (its fingerprint, long ID
 * or a user ID that gpg resolves to it). With --bundle, once everything passed, the release's
 * files (all but maven-metadata) go into ZIP in the repository's layout: the bundle that Central's
 * Publisher API takes (src/test/release/publish uploads it).
 */
public final class CentralCheck {

  private static final List<String> CHECKSUMS = List.of("md5", "sha1");
  private static final Map<String, String> DIGESTS =
      Map.of("md5", "MD5", "sha1", "SHA-1", "sha256", "SHA-256", "sha512", "SHA-512");
  private static final Pattern SUFFIX = Pattern.compile(".*\\.(asc|md5|sha1|sha256|sha512)$");

  private final List<String> problems = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    String repository = null, group = null, artifact = null, version = null, gpg = "gpg", key = null;
    String bundle = null;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--repository" -> repository = value;
        case "--group" -> group = value;
        case "--artifact" -> artifact = value;
        case "--version" -> version = value;
        case "--gpg" -> gpg = value;
        // Maven leaves ${gpg.keyname} as it is when the property is not set: no key named.
        case "--key" -> key = value == null || value.isBlank() || value.startsWith("${") ? null : value;
        case "--bundle" -> bundle = value;
        default -> throw new IllegalArgumentException("CentralCheck: unknown argument " + args[i]
            + "; usage: --repository DIR --group G --artifact A --version V [--gpg gpg] [--key K]"
            + " [--bundle ZIP]");
      }
      i++;
    }
    if (repository == null || group == null || artifact == null || version == null) {
      throw new IllegalArgumentException(
          "CentralCheck: --repository, --group, --artifact and --version are required");
    }
    CentralCheck check = new CentralCheck();
    Path dir = Path.of(repository, group.replace('.', '/'), artifact, version);
    int artifacts = check.run(dir, group, artifact, version, gpg, key);
    if (!check.problems.isEmpty()) {
      System.err.println("CentralCheck: " + dir + " is not a release Maven Central takes ("
          + check.problems.size() + " problem(s)):");
      check.problems.forEach(p -> System.err.println("  - " + p));
      System.err.println("See docs/contributing.md, \"Releasing\".");
      System.exit(1);
    }
    System.out.println("CentralCheck: " + dir + ": " + artifacts
        + " artifacts, each signed (signature verified) with its .md5 and .sha1; the POM has"
        + " every field Central requires");
    if (bundle != null) {
      writeBundle(Path.of(repository), dir, Path.of(bundle));
      System.out.println("CentralCheck: the bundle for Central: " + bundle);
    }
  }

  /** The checked files, in the repository's layout, in a zip with fixed times and order. */
  private static void writeBundle(Path repository, Path dir, Path bundle) throws IOException {
    Files.createDirectories(bundle.toAbsolutePath().getParent());
    TreeSet<Path> files = new TreeSet<>();
    try (Stream<Path> list = Files.list(dir)) {
      list.filter(p -> !p.getFileName().toString().startsWith("maven-metadata")).forEach(files::add);
    }
    try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(bundle))) {
      for (Path file : files) {
        ZipEntry entry = new ZipEntry(repository.relativize(file).toString().replace('\\', '/'));
        entry.setTime(315532800000L); // 1980-01-01, the zip format's first day
        zip.putNextEntry(entry);
        Files.copy(file, zip);
        zip.closeEntry();
      }
    }
  }

  private int run(Path dir, String group, String artifact, String version, String gpg, String key)
      throws Exception {
    if (version.endsWith("-SNAPSHOT")) {
      problems.add("version " + version + " is a snapshot: Central takes releases only; set the"
          + " release's version first (mvn versions:set -DnewVersion=...)");
      return 0;
    }
    if (!Files.isDirectory(dir)) {
      problems.add("no directory " + dir + ": the release profile's deploy did not write there");
      return 0;
    }
    TreeSet<String> files = new TreeSet<>();
    try (Stream<Path> list = Files.list(dir)) {
      list.forEach(p -> files.add(p.getFileName().toString()));
    }
    String base = artifact + "-" + version;
    for (String required : List.of(base + ".pom", base + ".jar", base + "-sources.jar",
        base + "-javadoc.jar")) {
      if (!files.contains(required)) {
        problems.add("missing " + required + " (Central requires the POM, the jar, the sources"
            + " jar and the Javadoc jar)");
      }
    }
    int artifacts = 0;
    for (String name : files) {
      if (SUFFIX.matcher(name).matches() || name.startsWith("maven-metadata")) {
        continue;
      }
      artifacts++;
      if (!name.startsWith(base + ".") && !name.startsWith(base + "-")) {
        problems.add(name + " is not named " + base + "[-classifier].extension");
      }
      Path file = dir.resolve(name);
      for (String sum : CHECKSUMS) {
        if (!files.contains(name + "." + sum)) {
          problems.add("missing " + name + "." + sum);
        }
      }
      for (String sum : DIGESTS.keySet()) {
        if (files.contains(name + "." + sum)) {
          checkDigest(file, dir.resolve(name + "." + sum), DIGESTS.get(sum));
        }
      }
      if (!files.contains(name + ".asc")) {
        problems.add("missing " + name + ".asc (every artifact must be signed: the release"
            + " profile's maven-gpg-plugin signs all, attached ones too, in verify)");
      } else {
        verifySignature(gpg, key, file, dir.resolve(name + ".asc"));
      }
      if (name.endsWith(".jar")) {
        checkJar(file, name, base);
      }
    }
    // Signatures of nothing (a renamed or removed artifact) are a mistake too.
    for (String name : files) {
      if (name.endsWith(".asc") && !files.contains(name.substring(0, name.length() - 4))) {
        problems.add(name + " signs a file that is not there");
      }
    }
    if (files.contains(base + ".pom")) {
      checkPom(dir.resolve(base + ".pom"), group, artifact, version);
    }
    return artifacts;
  }

  private void checkDigest(Path file, Path sumFile, String algorithm)
      throws IOException, NoSuchAlgorithmException {
    String text = Files.readString(sumFile, StandardCharsets.US_ASCII).trim();
    String expected = text.isEmpty() ? "" : text.split("\\s+")[0].toLowerCase();
    MessageDigest digest = MessageDigest.getInstance(algorithm);
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
    }
    String actual = HexFormat.of().formatHex(digest.digest());
    if (!actual.equals(expected)) {
      problems.add(sumFile.getFileName() + " says " + (expected.isEmpty() ? "nothing" : expected)
          + ", but the " + algorithm + " of " + file.getFileName() + " is " + actual);
    }
  }

  private void verifySignature(String gpg, String key, Path file, Path signature)
      throws IOException, InterruptedException {
    Process process = new ProcessBuilder(gpg, "--batch", "--no-tty", "--status-fd", "1",
        "--verify", signature.toString(), file.toString())
        .redirectErrorStream(true).start();
    process.getOutputStream().close();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      problems.add("gpg --verify " + signature.getFileName() + " did not end within 60 s");
      return;
    }
    String validSig = output.lines().filter(l -> l.startsWith("[GNUPG:] VALIDSIG "))
        .findFirst().orElse(null);
    if (process.exitValue() != 0 || validSig == null) {
      problems.add("the signature " + signature.getFileName() + " does not verify (gpg exit "
          + process.exitValue() + "): " + output.lines()
              .filter(l -> l.startsWith("gpg:") || l.contains("BADSIG") || l.contains("NO_PUBKEY")
                  || l.contains("ERRSIG"))
              .reduce((a, b) -> a + "; " + b).orElse(output.strip()));
      return;
    }
    if (key != null) {
      // VALIDSIG <signing key fingerprint> ... <primary key fingerprint> (the last field).
      String[] fields = validSig.split(" ");
      String signer = fields[2], primary = fields[fields.length - 1];
      String wanted = fingerprint(gpg, key);
      if (wanted == null || !(wanted.equals(signer) || wanted.equals(primary))) {
        problems.add(signature.getFileName() + " is signed by " + primary + ", not by the key "
            + key + (wanted == null ? " (which gpg does not know)" : " (" + wanted + ")"));
      }
    }
  }

  private String fingerprint(String gpg, String key) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(gpg, "--batch", "--no-tty", "--with-colons",
        "--fingerprint", key).redirectErrorStream(true).start();
    process.getOutputStream().close();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    process.waitFor(60, TimeUnit.SECONDS);
    return output.lines().filter(l -> l.startsWith("fpr:")).map(l -> l.split(":")[9])
        .findFirst().orElse(null);
  }

  private void checkJar(Path file, String name, String base) {
    String kind = name.equals(base + "-sources.jar") ? ".java"
        : name.equals(base + "-javadoc.jar") ? "index.html"
        : name.equals(base + ".jar") ? ".class" : null;
    try (ZipFile zip = new ZipFile(file.toFile())) {
      if (kind != null && zip.stream().noneMatch(e -> e.getName().endsWith(kind))) {
        problems.add(name + " holds no " + kind + " file");
      }
    } catch (IOException e) {
      problems.add(name + " is not a readable jar: " + e);
    }
  }

  private void checkPom(Path pom, String group, String artifact, String version) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    Document document = factory.newDocumentBuilder().parse(pom.toFile());
    Element project = document.getDocumentElement();
    String name = pom.getFileName().toString();
    expect(name, project, group, "groupId");
    expect(name, project, artifact, "artifactId");
    expect(name, project, version, "version");
    for (String[] field : new String[][] {{"name"}, {"description"}, {"url"},
        {"licenses", "license", "name"}, {"developers", "developer", "name"},
        {"scm", "connection"}, {"scm", "developerConnection"}, {"scm", "url"}}) {
      String value = text(project, field);
      String path = String.join("/", field);
      if (value == null || value.isBlank()) {
        problems.add(name + " has no <" + path + "> (Central requires it: add it to pom.xml)");
      } else if (value.contains("${")) {
        problems.add(name + ": <" + path + "> is not resolved: " + value);
      }
    }
  }

  private void expect(String pom, Element project, String expected, String field) {
    String value = text(project, field);
    if (!expected.equals(value)) {
      problems.add(pom + ": <" + field + "> is " + value + ", not " + expected);
    }
  }

  /** The text of the first element at this path under the project (direct children only). */
  private static String text(Element element, String... path) {
    Element current = element;
    for (String step : path) {
      Element next = null;
      for (Node n = current.getFirstChild(); n != null; n = n.getNextSibling()) {
        if (n instanceof Element e && step.equals(e.getLocalName() != null ? e.getLocalName()
            : e.getTagName())) {
          next = e;
          break;
        }
      }
      if (next == null) {
        return null;
      }
      current = next;
    }
    return current.getTextContent().trim();
  }
}
