package dev.metakit.example.boot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.sandbox.Convergence;
import dev.metakit.inbox.sandbox.Position;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.sandbox.WebhookSender;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.camel.component.micrometer.routepolicy.MicrometerRoutePolicy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.util.TestSocketUtils;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Spring Boot host with only the starter, against a real PostgreSQL (embedded, from Maven-shipped binaries) and
 * the bundle's MetaKit sandbox: the webhook on Boot's own port, the bundle on Boot's database (a pool of its own), its
 * settings from application.yaml and the environment, its health in Actuator and its meters on Actuator's Prometheus
 * endpoint.
 * Everything else is the starter's defaults.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT)
// a Boot test turns metrics export off unless asked: the Prometheus endpoint is what this test is about
@AutoConfigureObservability(tracing = false)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
// the host stops when the class ends (not at the JVM's exit, where its slow stop held the test JVM 30 s)
@DirtiesContext
class InboxHostApplicationTest {
    private static final String SECRET = "whsec_spring_boot_host_test";
    private static final int PORT = TestSocketUtils.findAvailableTcpPort();
    private static final EmbeddedPostgres POSTGRES = TestParts.postgres();
    // no injected faults: this test is about the wiring into Boot, the fault tests are the bundle's
    private static final Sandbox SANDBOX = TestParts.sandbox(SandboxSettings.builder()
            .webhookUrl(base() + "/hooks/metakit").webhookSecret(SECRET).accounts(2).operations(40)
            .faults(SandboxFaults.none()).apiPort(0).build());
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** the webhook's route (routes/ingest.camel.yaml) */
    private static final String INGEST_ROUTE = "metakit-ingest";
    private static final ObjectMapper JSON = new ObjectMapper();

    @Autowired
    DataSource dataSource;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    org.apache.camel.CamelContext camel;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("server.port", () -> PORT);
        TestParts.hostDataSource(registry, POSTGRES);
        registry.add("metakit.webhook.secret", () -> SECRET);
        registry.add("metakit.api.url", () -> SANDBOX.apiBaseUrl().toString());
        registry.add("metakit.api.key", SANDBOX::apiKey);
        registry.add("metakit.accounts", () -> "1,2");
        // not the default (45 s): the last test stops the database, and the bundle's exchanges waiting for a
        // connection would hold the host's graceful stop for Hikari's 30 s connection timeout at the class's end
        registry.add("camel.main.shutdown-timeout", () -> "5");
    }

    @AfterAll
    static void stop() throws IOException {
        SANDBOX.close();
        POSTGRES.close();
    }

    @Test
    @Order(1)
    void theMigrationsRanOnBootsDataSourceInAHistoryTableOfTheirOwn() {
        assertThat(jdbc.queryForObject("select count(*) from metakit.metakit_schema_history where success",
                Long.class)).isGreaterThanOrEqualTo(9);
        // the bundle's tables in its own schema: none in the host's
        assertThat(jdbc.queryForObject("select count(*) from pg_tables where schemaname = 'public'"
                + " and tablename in ('webhook_inbox', 'accounts', 'positions', 'metakit_schema_history')", Long.class))
                .isZero();
        // Boot's own Flyway (the host's, classpath:db/migration) keeps its history apart and never sees the bundle's
        assertThat(jdbc.queryForObject("select to_regclass('flyway_schema_history') is null"
                + " or not exists (select 1 from flyway_schema_history where script like 'V%__webhook_inbox.sql')",
                Boolean.class)).as("the bundle's scripts are not in the host's Flyway history").isTrue();
        assertThat(dataSource.getClass().getName()).isEqualTo("com.zaxxer.hikari.HikariDataSource");
    }

    @Test
    @Order(2)
    void theSandboxsTrafficIsStoredProcessedAndReconciled() throws Exception {
        SANDBOX.start();
        await().atMost(Duration.ofSeconds(60)).until(SANDBOX::trafficDone);
        assertThat(SANDBOX.quiesce(Duration.ofSeconds(30))).as("sandbox deliveries settle").isTrue();

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            assertThat(jdbc.queryForObject("select count(*) from metakit.webhook_inbox where processed_at is null",
                    Long.class)).as("rows not processed yet").isZero();
            assertThat(Convergence.check(SANDBOX.truth(), inboxDataSource()).differences())
                    .as("positions that differ from the sandbox's truth").isEmpty();
        });
        assertThat(jdbc.queryForObject("select count(*) from metakit.webhook_inbox where failed_at is not null", Long.class))
                .isZero();
        // the change feed (its default outlet, a log) publishes what the reconciles changed
        assertThat(jdbc.queryForObject("select count(*) from metakit.position_changes", Long.class)).isPositive();
        await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                "select count(*) from metakit.position_changes where published_at is null", Long.class) == 0);
        // the periodic full reconcile ran for the configured accounts
        assertThat(jdbc.queryForObject("select count(*) from metakit.accounts", Long.class)).isPositive();
    }

    @Test
    @Order(3)
    void aDeliveryIsStoredThenADuplicateAndAForgedOneIsRefused() throws Exception {
        Position open = anyOpenPosition();
        byte[] body = ("{\"event\":\"position.opened\",\"account_id\":" + open.accountId()
                + ",\"data\":{\"ticket\":" + open.ticket() + "}}").getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        String signature = "t=" + t + ",v1=" + hmac(SECRET, t, body);

        HttpResponse<String> first = postDelivery(body, signature);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("stored");
        HttpResponse<String> again = postDelivery(body, signature);
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(again.body()).isEqualTo("duplicate");
        HttpResponse<String> forged = postDelivery(body, "t=" + t + ",v1=" + hmac("not-the-secret", t, body));
        assertThat(forged.statusCode()).isEqualTo(400);

        await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                "select count(*) from metakit.webhook_inbox where processed_at is null", Long.class) == 0);
    }

    @Test
    @Order(3)
    void theSignatureIsReadFromTheRequestHeadersOnlyAndALargeBodyIsRefusedBeforeItIsRead() throws Exception {
        byte[] body = "{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":77}}"
                .getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        String signature = "t=" + t + ",v1=" + hmac(SECRET, t, body);
        // a valid signature in the query string, none in the headers: not a signed delivery
        HttpResponse<String> inQuery = HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/hooks/metakit?"
                                + "X-MetaKit-Signature=" + java.net.URLEncoder.encode(signature, StandardCharsets.UTF_8)
                                + "&X-MetaKit-Event=position.opened"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(inQuery.statusCode()).as(inQuery.body()).isEqualTo(400);
        assertThat(jdbc.queryForObject("select count(*) from metakit.webhook_inbox where body::text like '%\"ticket\":77%'",
                Long.class)).isZero();

        // over metakit.max-body-bytes (1 MiB by default): 413, as the standalone run's server answers
        byte[] large = new byte[1024 * 1024 + 1];
        java.util.Arrays.fill(large, (byte) ' ');
        HttpResponse<String> tooLarge = postDelivery(large, signature);
        assertThat(tooLarge.statusCode()).isEqualTo(413);
    }

    @Test
    @Order(4)
    void anEnvironmentVariableReachesTheBundleThroughRelaxedBinding() throws Exception {
        // METAKIT_WEBHOOK_TOLERANCE_SECONDS=60 (pom.xml, surefire) overrides application.yaml's 300: a delivery
        // signed two minutes ago is outside it
        byte[] body = "{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":1}}"
                .getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000 - 120;
        HttpResponse<String> old = postDelivery(body, "t=" + t + ",v1=" + hmac(SECRET, t, body));
        assertThat(old.statusCode()).isEqualTo(400);
        assertThat(old.body()).contains("tolerance");
    }

    @Test
    @Order(5)
    void theHostsOwnRouteServesWhatTheBundleReconciled() throws Exception {
        Position open = anyOpenPosition();
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
                URI.create(base() + "/accounts/" + open.accountId() + "/open-positions")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        JsonNode rows = JSON.readTree(response.body());
        assertThat(rows).extracting(r -> r.get("ticket").asLong())
                .containsExactlyInAnyOrderElementsOf(
                        SANDBOX.truth().openPositions(open.accountId()).keySet());
    }

    @Test
    @Order(6)
    void actuatorShowsTheBundlesHealthAndMeters() throws Exception {
        HttpResponse<String> readiness = get("/actuator/health/readiness");
        assertThat(readiness.statusCode()).as(readiness.body()).isEqualTo(200);
        // the readiness group holds Camel's checks, the bundle's among them (application.yaml); one that is down
        // is named there (readinessGoesDownWithinFiveSecondsOfTheDatabaseStopping)
        assertThat(JSON.readTree(readiness.body()).at("/components/camelHealth/status").asText()).isEqualTo("UP");
        HttpResponse<String> health = get("/actuator/health");
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);

        HttpResponse<String> prometheus = get("/actuator/prometheus");
        assertThat(prometheus.statusCode()).isEqualTo(200);
        assertThat(prometheus.body())
                .containsPattern("(?m)^metakit_webhook_stored_total(\\{[^}]*})? [1-9]")
                .containsPattern("(?m)^metakit_webhook_duplicates_total(\\{[^}]*})? [1-9]")
                .containsPattern("(?m)^metakit_webhook_rejected_total\\{[^}]*reason=\"signature_mismatch\"[^}]*} [1-9]")
                .containsPattern("(?m)^metakit_inbox_rows_processed_total(\\{[^}]*})? [1-9]")
                .containsPattern("(?m)^metakit_reconciles_total\\{[^}]*}")
                .contains("metakit_inbox_backlog");
        // Camel's own route meters, from Camel Spring Boot's route timing (on by default, the host's setting): every
        // route, the ingest route included, each timed by one policy only (the bundle adds none beside it)
        for (String route : List.of(InboxToPositionRoutes.DRAIN_ROUTE, InboxToPositionRoutes.RECONCILE_ACCOUNT_ROUTE,
                INGEST_ROUTE)) {
            assertThat(prometheus.body())
                    .containsPattern("(?m)^camel_exchanges_total\\{[^}]*routeId=\"" + route + "\"[^}]*} [1-9]")
                    .containsPattern("(?m)^camel_route_policy_seconds_count\\{[^}]*routeId=\"" + route + "\"");
            assertThat(camel.getRoute(route).getRoutePolicyList())
                    .as(route).filteredOn(MicrometerRoutePolicy.class::isInstance).hasSize(1);
        }
        // the shipped alert rules read the same names here as on the standalone run's /observe/metrics
        assertThat(metricNames(prometheus.body())).containsAll(metricsTheRulesRead());
    }

    /** The bundle's metrics that ops/prometheus/metakit-inbox.rules.yml reads (not its recording rules' names). */
    private static Set<String> metricsTheRulesRead() throws IOException {
        String rules = Files.readString(Path.of("../../ops/prometheus/metakit-inbox.rules.yml"));
        Matcher m = Pattern.compile("(?<![:\\w])metakit_\\w+").matcher(rules);
        Set<String> names = new TreeSet<>();
        while (m.find()) {
            names.add(m.group());
        }
        assertThat(names).contains("metakit_webhook_unavailable_total", "metakit_readiness_up");
        return names;
    }

    private static Set<String> metricNames(String exposition) {
        return exposition.lines().filter(l -> !l.startsWith("#") && !l.isBlank())
                .map(l -> l.split("[{ ]", 2)[0]).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    @Order(7)
    void readinessGoesDownWithinFiveSecondsOfTheDatabaseStopping() throws Exception {
        // a real PostgreSQL stopped (pg_ctl stop), with Boot's default HikariCP (30 s connection timeout): the
        // bundle's database check bounds its own wait
        POSTGRES.close();
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(250))
                .until(() -> get("/actuator/health/readiness").statusCode() == 503);
        // Camel's health (in the readiness group) names the bundle's database check as the one that is down
        assertThat(get("/actuator/health/readiness").body()).contains("inbox-database");
        assertThat(get("/actuator/health/liveness").statusCode()).isEqualTo(200);
    }

    /** The bundle's DataSource: its connections find the bundle's tables (Convergence reads positions). */
    private DataSource inboxDataSource() {
        return camel.getRegistry().lookupByNameAndType("inboxDataSource", DataSource.class);
    }

    private static Position anyOpenPosition() {
        return SANDBOX.truth().openPositions().values().stream()
                .flatMap(m -> m.values().stream()).findFirst()
                .orElseThrow(() -> new AssertionError("the sandbox has no open position"));
    }

    private static HttpResponse<String> postDelivery(byte[] body, String signature) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/hooks/metakit"))
                        .header("Content-Type", "application/json")
                        .header("X-MetaKit-Event", "position.opened")
                        .header("X-MetaKit-Signature", signature)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base() + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String base() {
        return "http://127.0.0.1:" + PORT;
    }

    /** hex(HMAC-SHA256(secret, "t." + body)), from MetaKit's contract: the sandbox's signer, the project's one */
    private static String hmac(String secret, long t, byte[] body) {
        return WebhookSender.sign(secret, t, body);
    }
}
