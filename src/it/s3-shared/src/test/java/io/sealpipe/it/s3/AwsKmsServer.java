package io.sealpipe.it.s3;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real AWS KMS API server for the tests: local-kms (github.com/nsmithuk/local-kms, the Go
 * emulator of AWS KMS's JSON API, built by the build: src/it/s3-shared/local-kms-install), started
 * on a fresh data directory with
 * the keys and aliases of {@link #SEED}, and stopped by {@link #close()}.
 *
 * <p>local-kms listens on every interface and has no setting for that: the test JVMs that start
 * it run in a network namespace whose only interface is the loopback (src/it/loopback-only). The
 * clients speak to it through a proxy here, on 127.0.0.1, which counts the requests by operation
 * ({@code X-Amz-Target}) and can refuse operations as IAM would ({@link #deny}), which local-kms
 * cannot. The emulator's own log counts the operations it carried out ({@link #served}), so the
 * proxy's counts have a control.
 */
public final class AwsKmsServer implements AutoCloseable {
    public static final String ACCOUNT = "111122223333";
    public static final String REGION = "eu-west-2";
    /** Key ids of the seed: a key for most tests, a second one to rotate to, one to disable. */
    public static final String KEY_MAIN = "0a1b2c3d-0000-4000-8000-000000000001";
    public static final String KEY_NEXT = "0a1b2c3d-0000-4000-8000-000000000002";
    public static final String KEY_DISABLE = "0a1b2c3d-0000-4000-8000-000000000003";
    /** Someone else's key, which the tests' files must not be able to name. */
    public static final String KEY_OTHER = "0a1b2c3d-0000-4000-8000-000000000004";
    /** Aliases: two on the main key (to show that the context binds the name), one that moves, one on the key to disable. */
    public static final String ALIAS = "alias/sealpipe";
    public static final String ALIAS_TWIN = "alias/sealpipf";
    public static final String ALIAS_ROTATING = "alias/sealpipe-rotating";
    public static final String ALIAS_DISABLED = "alias/sealpipe-disabled";
    /** The command line's: moved to {@link #KEY_NEXT} before {@code sealpipe rewrap}. */
    public static final String ALIAS_CLI = "alias/sealpipe-cli";

    private static final String SEED = """
            Keys:
              Symmetric:
                Aes:
                  - Metadata: {KeyId: %s}
                    BackingKeys: [5cdaead27fe7da2de47945d73cd6d79e36494e73802f3cd3869f1d2cb0b5d7a9]
                  - Metadata: {KeyId: %s}
                    BackingKeys: [8f2b0c9e6a1d4f3b7c5e9a2d6f1b3c8e4a7d2f9b1c6e3a8d5f2b7c4e9a1d6f3b]
                  - Metadata: {KeyId: %s}
                    BackingKeys: [1e4d7a2c9f6b3e8d5a2c7f4b1e9d6a3c8f5b2e7d4a1c9f6b3e8d5a2c7f4b1e9d]
                  - Metadata: {KeyId: %s}
                    BackingKeys: [3b6e9a2d5f8c1b4e7a0d3f6c9b2e5a8d1f4c7b0e3a6d9f2c5b8e1a4d7f0c3b6e]
            Aliases:
              - {AliasName: %s, TargetKeyId: %s}
              - {AliasName: %s, TargetKeyId: %s}
              - {AliasName: %s, TargetKeyId: %s}
              - {AliasName: %s, TargetKeyId: %s}
              - {AliasName: %s, TargetKeyId: %s}
            """.formatted(KEY_MAIN, KEY_NEXT, KEY_DISABLE, KEY_OTHER, ALIAS, KEY_MAIN, ALIAS_TWIN, KEY_MAIN, ALIAS_ROTATING, KEY_MAIN,
            ALIAS_DISABLED, KEY_DISABLE, ALIAS_CLI, KEY_MAIN);
    private static final Pattern STARTED = Pattern.compile("Local KMS started on [^:\\s]*:(\\d+)");

    private final Process process;
    private final Path log;
    private final int kmsPort;
    private final HttpServer proxy;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    private final Set<String> denied = ConcurrentHashMap.newKeySet();

    private AwsKmsServer(Process process, Path log, int kmsPort, HttpServer proxy) {
        this.process = process;
        this.log = log;
        this.kmsPort = kmsPort;
        this.proxy = proxy;
    }

    /** Starts local-kms in {@code dir} (made afresh) and the counting proxy before it. */
    public static AwsKmsServer start(Path dir) throws Exception {
        String binary = binary();
        deleteTree(dir);
        Files.createDirectories(dir.resolve("data"));
        Files.writeString(dir.resolve("seed.yaml"), SEED);
        Path log = dir.resolve("local-kms.log");
        ProcessBuilder builder = new ProcessBuilder(binary).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().put("PORT", "0");
        builder.environment().put("KMS_DATA_PATH", dir.resolve("data").toString());
        builder.environment().put("KMS_SEED_PATH", dir.resolve("seed.yaml").toString());
        builder.environment().put("KMS_ACCOUNT_ID", ACCOUNT);
        builder.environment().put("KMS_REGION", REGION);
        Process process = builder.start();
        HttpServer proxy = null;
        try {
            int port = awaitPort(process, log);
            proxy = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
            AwsKmsServer server = new AwsKmsServer(process, log, port, proxy);
            proxy.createContext("/", server::forward);
            proxy.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(4, r -> {
                Thread t = new Thread(r, "aws-kms-proxy");
                t.setDaemon(true);
                return t;
            }));
            proxy.start();
            return server;
        } catch (Exception | Error e) {
            process.destroyForcibly();
            if (proxy != null) {
                proxy.stop(0);
            }
            throw e;
        }
    }

    /** The local-kms executable that the build installed: the system property sealpipe.it.local-kms. */
    private static String binary() {
        String named = System.getProperty("sealpipe.it.local-kms", "");
        if (named.isEmpty() || !Files.isExecutable(Path.of(named))) {
            throw new IllegalStateException("local-kms, the AWS KMS API server these tests run against, is not at "
                    + (named.isEmpty() ? "(system property sealpipe.it.local-kms unset)" : named) + ": run the tests"
                    + " through Maven, whose build installs it (src/it/s3-shared/local-kms-install, with Go 1.20 or newer)");
        }
        return named;
    }

    /** Waits for local-kms's "started on" line (it picks its own port: PORT=0), or its exit. */
    private static int awaitPort(Process process, Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Matcher started = STARTED.matcher(Files.exists(log) ? Files.readString(log) : "");
            if (started.find()) {
                return Integer.parseInt(started.group(1));
            }
            if (process.waitFor(50, TimeUnit.MILLISECONDS)) {
                throw new IOException("local-kms exited with " + process.exitValue() + " before it listened; its log, "
                        + log + ":\n" + Files.readString(log));
            }
        }
        throw new IOException("local-kms did not listen within 60 s; its log, " + log + ":\n" + Files.readString(log));
    }

    /** Forwards one request to local-kms, or refuses it as IAM would where its operation is denied; counts it. */
    private void forward(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body;
            try (InputStream in = exchange.getRequestBody()) {
                body = in.readAllBytes();
            }
            String target = exchange.getRequestHeaders().getFirst("X-Amz-Target");
            String operation = target == null ? "?" : target.substring(target.indexOf('.') + 1);
            requests.computeIfAbsent(operation, k -> new AtomicInteger()).incrementAndGet();
            if (denied.contains(operation)) {
                respond(exchange, 400, "{\"__type\":\"AccessDeniedException\",\"Message\":\"User: arn:aws:iam::" + ACCOUNT
                        + ":user/test is not authorized to perform: kms:" + operation + " because no identity-based"
                        + " policy allows the kms:" + operation + " action\"}");
                return;
            }
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + kmsPort + "/"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            if (target != null) {
                request.header("X-Amz-Target", target);
            }
            String type = exchange.getRequestHeaders().getFirst("Content-Type");
            request.header("Content-Type", type == null ? "application/x-amz-json-1.1" : type);
            HttpResponse<byte[]> answer;
            try {
                answer = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.1");
            exchange.sendResponseHeaders(answer.statusCode(), answer.body().length == 0 ? -1 : answer.body().length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer.body());
            }
        }
    }

    private static void respond(HttpExchange exchange, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.1");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** The URL that clients use: the counting proxy, http://127.0.0.1:PORT. */
    public String endpoint() {
        return "http://127.0.0.1:" + proxy.getAddress().getPort();
    }

    /** A URL where no KMS listens: a port bound and released. */
    public static String endpointOfNoServer() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "http://127.0.0.1:" + socket.getLocalPort();
        }
    }

    /** The ARN of key {@code keyId}. */
    public static String arn(String keyId) {
        return "arn:aws:kms:" + REGION + ":" + ACCOUNT + ":key/" + keyId;
    }

    /** Requests of {@code operation} (GenerateDataKey, Decrypt, ReEncrypt...) that reached the proxy since the start. */
    public int requests(String operation) {
        AtomicInteger n = requests.get(operation);
        return n == null ? 0 : n.get();
    }

    /** All requests that reached the proxy. */
    public int requests() {
        return requests.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    /**
     * The operations that local-kms carried out, from its log: "GenerateDataKey", "Decrypt" and
     * "ReEncrypt" lines (it logs each one that succeeds).
     */
    public Map<String, Integer> served() throws IOException {
        String text = Files.readString(log);
        return Map.of("GenerateDataKey", count(text, "Data key generated"), "Decrypt", count(text, "Decryption called"),
                "ReEncrypt", count(text, "ReEncrypt called"));
    }

    private static int count(String text, String line) {
        int n = 0;
        for (int at = text.indexOf(line); at >= 0; at = text.indexOf(line, at + 1)) {
            n++;
        }
        return n;
    }

    /** Refuses {@code operation} from now on, as AWS does for a caller without the IAM permission. */
    public void deny(String operation) {
        denied.add(operation);
    }

    /** Allows every operation again. */
    public void allowAll() {
        denied.clear();
    }

    /** An administrative call straight to local-kms (not counted): {@code DisableKey}, {@code UpdateAlias}... */
    public String admin(String operation, String json) throws IOException, InterruptedException {
        HttpResponse<String> answer = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + kmsPort + "/"))
                .header("X-Amz-Target", "TrentService." + operation).header("Content-Type", "application/x-amz-json-1.1")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IOException("local-kms refused " + operation + " " + json + ": HTTP " + answer.statusCode() + " "
                    + answer.body());
        }
        return answer.body();
    }

    /** Points {@code alias} at {@code keyId}. */
    public void updateAlias(String alias, String keyId) throws IOException, InterruptedException {
        admin("UpdateAlias", "{\"AliasName\":\"" + alias + "\",\"TargetKeyId\":\"" + keyId + "\"}");
    }

    public void disableKey(String keyId) throws IOException, InterruptedException {
        admin("DisableKey", "{\"KeyId\":\"" + keyId + "\"}");
    }

    public void enableKey(String keyId) throws IOException, InterruptedException {
        admin("EnableKey", "{\"KeyId\":\"" + keyId + "\"}");
    }

    /** local-kms's log so far. */
    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws Exception {
        try {
            proxy.stop(0);
        } finally {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
