package dev.metakit.inbox.support;

import dev.metakit.inbox.ops.EssentialRoute;
import org.apache.camel.CamelContext;
import org.apache.camel.main.Main;
import org.apache.camel.main.MainListener;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;

/**
 * The real bundle on camel-main, with the YAML route files from the project's routes/ folder, on free ports and a test
 * database: in the bundle's tests on camel-main's own servers, in the standalone runtime's tests booted the way
 * {@code java -jar} boots it (the startup checks, the application.properties of the working directory over the jar's,
 * the run mode, the front door): {@link InboxBoot}.
 */
public final class RunningInbox implements AutoCloseable {
    public static final String SECRET = "whsec_test_current_0123456789";
    public static final String PREVIOUS_SECRET = "whsec_test_previous_9876543210";

    private static final InboxBoot BOOT = InboxBoot.loaded();

    private final Main main;
    private final int httpPort;
    private final int managementPort;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private RunningInbox(Path workingDirectory, Map<String, String> environment, Map<String, String> overrides) {
        httpPort = freePort();
        managementPort = freePort();
        main = BOOT.boot(environment::get, workingDirectory);
        ignoreTheTestJvmsEnvironment(main);
        // the project's route files, as ./run.sh points camel-main at them, rather than the build's copies in the jar
        main.addOverrideProperty(ROUTE_FILES, "file:" + basedir().resolve("routes") + "/*.camel.yaml");
        testSettings(httpPort, managementPort).forEach(main::addOverrideProperty);
        String routeFiles = overrides.get(ROUTE_FILES);
        if (routeFiles != null && !routeFiles.contains("*") && !routeFiles.contains("worker.camel.yaml")) {
            // the bundle's Java routes (worker, reconcile) come with the worker's route file, as onlyRoutes says
            overrides.putIfAbsent(JAVA_ROUTES, NoJavaRoutes.class.getName());
        }
        if (routeFiles != null && !routeFiles.contains("*")) {
            // a test that runs part of the bundle says so, as an integrator would: its essential routes left out
            overrides.putIfAbsent(REPLACED_ROUTES, leftOut(routeFiles,
                    !NoJavaRoutes.class.getName().equals(overrides.get(JAVA_ROUTES))));
        }
        overrides.forEach(main::addOverrideProperty);
    }

    /** Copies the project's route files into {@code dir}: a test's own set to edit. */
    public static void copyRouteFiles(Path dir) throws IOException {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(basedir().resolve("routes"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".camel.yaml")).toList()) {
                java.nio.file.Files.copy(f, dir.resolve(f.getFileName()));
            }
        }
    }

    /**
     * What the environment of a test run says (HTTP_PORT, METAKIT_WEBHOOK_SECRET, DATABASE_URL, ...): loopback on these
     * ports, the test secret, the test database, and no MetaKit unless a test brings one (nothing listens on the
     * discard port).
     */
    public static Map<String, String> testSettings(int httpPort, int managementPort) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("camel.server.port", String.valueOf(httpPort));
        p.put("camel.server.host", "127.0.0.1");
        p.put("camel.management.port", String.valueOf(managementPort));
        p.put("camel.management.host", "127.0.0.1");
        p.put("metakit.webhook.secret", SECRET);
        p.put("metakit.api.url", "http://127.0.0.1:9");
        p.put("metakit.api.key", "no-metakit-in-this-test");
        p.put("metakit.database.url", TestDatabase.jdbcUrl());
        p.put("metakit.database.user", TestDatabase.user());
        p.put("metakit.database.password", TestDatabase.password() == null ? "" : TestDatabase.password());
        return p;
    }

    /**
     * {@link NoEnvironmentOverrides} before the product's own listeners, so that the run mode is decided on the
     * settings the test gives, too.
     */
    private static void ignoreTheTestJvmsEnvironment(Main main) {
        List<MainListener> product = List.copyOf(main.getMainListeners());
        product.forEach(main::removeMainListener);
        main.addMainListener(new NoEnvironmentOverrides());
        product.forEach(main::addMainListener);
    }

    private static final String ROUTE_FILES = "camel.main.routes-include-pattern";
    private static final String JAVA_ROUTES = "camel.main.routes-builder-classes";
    private static final String REPLACED_ROUTES = "metakit.routes.replaced";
    /** the waits between MetaKit's five attempts */
    private static final long[] METAKIT_RETRY_DELAYS_MILLIS = {500, 1000, 2000, 4000};

    /** The essential routes not in these route files (nor among the Java routes, unless they are loaded). */
    static String leftOut(String routeFiles, boolean javaRoutesLoaded) {
        return java.util.Arrays.stream(EssentialRoute.values())
                .filter(r -> r.routeFile() != null ? !routeFiles.contains("/" + r.routeFile()) : !javaRoutesLoaded)
                .map(EssentialRoute::routeId).collect(java.util.stream.Collectors.joining(","));
    }

    /** camel-main refuses an empty list of route builders: this one adds no route */
    public static final class NoJavaRoutes extends org.apache.camel.builder.RouteBuilder {
        @Override
        public void configure() {
        }
    }

    public static RunningInbox start() {
        return start(Map.of());
    }

    /**
     * The bundle reconciling against a {@link FakeMetaKit}, with the worker tuned for tests (fast poll and backoff)
     * and the periodic jobs out of the way unless {@code overrides} bring them in.
     */
    public static RunningInbox againstFakeMetaKit(FakeMetaKit metakit, Map<String, String> overrides) {
        return againstFakeMetaKit(metakit, Map.of(), overrides);
    }

    /** As {@link #againstFakeMetaKit(FakeMetaKit, Map)}, with {@code environment} as the process environment. */
    public static RunningInbox againstFakeMetaKit(FakeMetaKit metakit, Map<String, String> environment,
                                                  Map<String, String> overrides) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("metakit.api.url", metakit.url());
        p.put("metakit.api.key", FakeMetaKit.API_KEY);
        p.put("metakit.worker.poll-interval-millis", "200");
        p.put("metakit.worker.backoff-base-millis", "100");
        p.put("metakit.worker.backoff-max-millis", "1000");
        p.put("metakit.reconcile.interval", "PT1H");
        p.put("metakit.status.interval", "PT1H");
        p.putAll(overrides);
        return start(basedir(), environment, p);
    }

    /**
     * The bundle with every other setting at its default, on a PostgreSQL server of the test's own (user postgres, no
     * password) and reconciling against a {@link FakeMetaKit}: how the database fault tests run it.
     */
    public static RunningInbox onServer(String jdbcUrl, FakeMetaKit metakit) {
        return start(Map.of(
                "metakit.database.url", jdbcUrl,
                "metakit.database.user", "postgres",
                "metakit.database.password", "",
                "metakit.api.url", metakit.url(),
                "metakit.api.key", FakeMetaKit.API_KEY));
    }

    public static RunningInbox start(Map<String, String> overrides) {
        return start(basedir(), Map.of(), overrides);
    }

    /**
     * As {@link #start(Map)}, as if {@code java -jar} ran in {@code workingDirectory} (its application.properties
     * overrides the jar's) with {@code environment} as the process environment. The test JVM's own environment never
     * reaches the bundle: Camel's lookup of the variables it derives from keys is off ({@link NoEnvironmentOverrides}).
     */
    public static RunningInbox start(Path workingDirectory, Map<String, String> environment,
                                     Map<String, String> overrides) {
        RunningInbox inbox = new RunningInbox(workingDirectory, environment, new LinkedHashMap<>(overrides));
        try {
            inbox.main.start();
        } catch (Exception e) {
            throw new IllegalStateException("the bundle did not start", e);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> inbox.healthStatus() == 200);
        return inbox;
    }

    /**
     * As {@link #start(Map)}, without waiting for readiness: for a bundle that is not meant to get ready. Returns
     * once the management server answers.
     */
    public static RunningInbox startUnready(Map<String, String> overrides) {
        RunningInbox inbox = new RunningInbox(basedir(), Map.of(), new LinkedHashMap<>(overrides));
        try {
            inbox.main.start();
        } catch (Exception e) {
            throw new IllegalStateException("the bundle did not start", e);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> inbox.healthStatus() != -1);
        return inbox;
    }

    /** {@code GET} of a management path (/observe/health/ready, ...), status and body. */
    public HttpResponse<String> management(String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(managementUri(path)).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The value of {@code camel.main.routes-include-pattern} that loads only the named route files; the bundle's Java
     * routes (worker and reconcile) are loaded when "worker" is among them. With "beans" come the run's own beans
     * (in the standalone runtime's tests routes/standalone.camel.yaml: the front door, the ops page; {@link InboxBoot}).
     */
    public static String onlyRoutes(String... names) {
        return java.util.Arrays.stream(names)
                .flatMap(n -> n.equals("beans")
                        ? java.util.stream.Stream.concat(java.util.stream.Stream.of(n), BOOT.ownRouteFiles().stream())
                        : java.util.stream.Stream.of(n))
                .map(n -> "file:" + basedir().resolve("routes").resolve(n + ".camel.yaml"))
                .collect(java.util.stream.Collectors.joining(","));
    }

    public static Path basedir() {
        return Path.of(System.getProperty("metakit.test.basedir", ".")).toAbsolutePath();
    }

    public URI webhookUri() {
        return URI.create("http://127.0.0.1:" + httpPort + "/hooks/metakit");
    }

    public URI managementUri(String path) {
        return URI.create("http://127.0.0.1:" + managementPort + path);
    }

    public CamelContext camelContext() {
        return main.getCamelContext();
    }

    public int healthStatus() {
        return HealthProbe.status(http, managementPort, Duration.ofSeconds(3));
    }

    public String metrics() throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(managementUri("/observe/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    /**
     * The slowest answer with {@code status} from a delivery's arrival to its answer, as the bundle's ack meter saw it
     * (its max over the last two minutes): the bundle's own time, where a loaded client's clock adds its scheduling.
     */
    public Duration slowestAnswer(int status) throws IOException, InterruptedException {
        return Duration.ofMillis(Math.round(1000 * Metrics.value(metrics(),
                "metakit_webhook_ack_seconds_max{status=\"" + status + "\"}")));
    }

    /**
     * Deliveries the inbox shed so far (answered 503, retry later, before their commit: the machine did not store them
     * within the commit bound), which only this count tells from the inbox's other 503s.
     */
    public double shedCount() throws IOException, InterruptedException {
        return Metrics.find(metrics(), "metakit_webhook_shed_total").orElse(0);
    }

    /** Posts a body with the given signature header (null: none) and event header. */
    public HttpResponse<String> post(byte[] body, String signatureHeader, String event)
            throws IOException, InterruptedException {
        return post(body, signatureHeader, event, Map.of());
    }

    /** As {@link #post(byte[], String, String)}, with more request headers. */
    public HttpResponse<String> post(byte[] body, String signatureHeader, String event, Map<String, String> headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(webhookUri()).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        if (signatureHeader != null) {
            b.header("X-MetaKit-Signature", signatureHeader);
        }
        if (event != null) {
            b.header("X-MetaKit-Event", event);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Posts a body signed now with the current test secret. */
    public HttpResponse<String> postSigned(byte[] body, String event) throws IOException, InterruptedException {
        return post(body, TestSignatures.header(SECRET, System.currentTimeMillis() / 1000, body), event);
    }

    /**
     * Delivers a body as MetaKit does (docs/metakit-contract.md): signed once, the same bytes sent again after a
     * non-2xx answer or a failed request, 0.5, 1, 2 and 4 s apart, five attempts at most. The answer MetaKit ends up
     * with: the first 2xx, else the last attempt's (a failed request's exception when the last attempt had none).
     * A test that asserts what a delivery gets uses this where a loaded machine may shed an attempt (503, retry later),
     * which MetaKit's retry turns into a later 2xx.
     */
    public HttpResponse<String> deliver(byte[] body, String event) throws IOException, InterruptedException {
        String signature = TestSignatures.header(SECRET, System.currentTimeMillis() / 1000, body);
        for (long delayMillis : METAKIT_RETRY_DELAYS_MILLIS) {
            try {
                HttpResponse<String> answer = post(body, signature, event);
                if (answer.statusCode() / 100 == 2) {
                    return answer;
                }
            } catch (IOException e) {
                // MetaKit counts a failed request as a failed attempt, as a non-2xx answer
            }
            Thread.sleep(delayMillis); // MetaKit's retry schedule, not a wait for a condition
        }
        return post(body, signature, event);
    }

    public int httpPort() {
        return httpPort;
    }

    @Override
    public void close() {
        try {
            main.stop();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A port for a server a test starts ({@link TestPorts}: none another test JVM beside this one picks). */
    public static int freePort() {
        return TestPorts.free();
    }
}
