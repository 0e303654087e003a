package dev.metakit.example.camelmain;

import dev.metakit.inbox.sandbox.Convergence;
import dev.metakit.inbox.sandbox.DeliveryAttempt;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.sandbox.WebhookSender;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The host as it is deployed: its Main in a process of its own, its application.properties from its classpath, its
 * ports from the command line and the bundle's settings from the environment (as docs/camel-main.md gives them), against a real PostgreSQL (embedded) and
 * the bundle's MetaKit sandbox. One delivery: signed by MetaKit, answered 2xx once its row is committed, then
 * reconciled by the worker against MetaKit's API.
 */
class InboxHostTest {
    private static final String SECRET = "whsec_camel_main_host_test";
    private static final Path LOG = Path.of("target", "inbox-host.log");
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private int port;
    private int managementPort;
    private EmbeddedPostgres postgres;
    private Sandbox sandbox;
    private Process host;

    @BeforeEach
    void start() throws IOException {
        postgres = EmbeddedPostgres.builder().start();
        // the host's ports stay bound here while the sandbox's API binds port 0: let go, a port is the kernel's to
        // hand out again to the next server that asks for any
        try (ServerSocket webhook = new ServerSocket(0); ServerSocket management = new ServerSocket(0)) {
            port = webhook.getLocalPort();
            managementPort = management.getLocalPort();
            // no generator (0 operations a second): the test makes the one operation whose delivery it follows
            sandbox = new Sandbox(SandboxSettings.builder().webhookUrl(base(port) + "/hooks/metakit")
                    .webhookSecret(SECRET).accounts(1).operationsPerSecond(0).faults(SandboxFaults.none()).apiPort(0)
                    .build());
        }
        ProcessBuilder process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                // the host's own ports, as a deployment's command line sets them over application.properties
                "-Dcamel.server.port=" + port, "-Dcamel.management.port=" + managementPort,
                InboxHost.class.getName())
                .redirectErrorStream(true).redirectOutput(LOG.toFile());
        process.environment().putAll(Map.of(
                "METAKIT_WEBHOOK_SECRET", SECRET,
                "METAKIT_API_URL", sandbox.apiBaseUrl().toString(),
                "METAKIT_API_KEY", sandbox.apiKey(),
                "METAKIT_DATABASE_URL", postgres.getJdbcUrl("postgres", "postgres"),
                "METAKIT_DATABASE_USER", "postgres",
                "METAKIT_DATABASE_PASSWORD", "postgres"));
        host = process.start();
    }

    @AfterEach
    void stop() throws Exception {
        if (host != null) {
            host.destroy(); // SIGTERM, as a platform stops it
            assertThat(host.waitFor(60, TimeUnit.SECONDS)).as(InboxHostTest::hostLog).isTrue();
        }
        if (sandbox != null) {
            sandbox.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void aSignedDeliveryIsStoredAnsweredThenReconciledAgainstMetaKit() throws Exception {
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            assertThat(host.isAlive()).as(InboxHostTest::hostLog).isTrue();
            assertThat(get(base(managementPort) + "/observe/health/ready").statusCode()).isEqualTo(200);
        });

        // a body whose signature is not the secret's is refused before anything is stored
        byte[] forged = "{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":1}}"
                .getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(URI.create(base(port) + "/hooks/metakit"))
                        .header("Content-Type", "application/json")
                        .header("X-MetaKit-Event", "position.opened")
                        .header("X-MetaKit-Signature", "t=" + t + ",v1=" + WebhookSender.sign("not-the-secret", t, forged))
                        .POST(HttpRequest.BodyPublishers.ofByteArray(forged)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(400);

        // MetaKit opens a position and sends its delivery, signed with the secret
        sandbox.market().open(1, "EURUSD", "buy", new BigDecimal("0.10"), BigDecimal.ZERO, BigDecimal.ZERO);
        assertThat(sandbox.awaitDeliveriesSettled(Duration.ofSeconds(30))).isTrue();
        assertThat(sandbox.deliveries().attempts()).as(InboxHostTest::hostLog)
                .hasSize(1).allMatch(DeliveryAttempt::succeeded);

        DataSource inbox = postgres.getPostgresDatabase(Map.of("currentSchema", "metakit"));
        assertThat(count(inbox, "select count(*) from webhook_inbox")).isOne();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            assertThat(count(inbox, "select count(*) from webhook_inbox where processed_at is not null")).isOne();
            assertThat(count(inbox, "select count(*) from positions")).isOne();
            assertThat(Convergence.check(sandbox.truth(), inbox).differences()).isEmpty();
        });

        // the bundle's meters on the host's registry
        assertThat(get(base(managementPort) + "/observe/metrics").body()).contains("metakit_webhook_stored_total");
    }

    private static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static long count(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String base(int port) {
        return "http://127.0.0.1:" + port;
    }

    private static String hostLog() {
        try {
            return Files.readString(LOG);
        } catch (IOException e) {
            return "(no host log: " + e + ")";
        }
    }
}
