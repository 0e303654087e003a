package dev.metakit.example.boot;

import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.sandbox.WebhookSender;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.ApplicationListener;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A host with tables of its own named as the bundle's ({@code accounts}, {@code positions}, {@code webhook_inbox}, in
 * public) and a Flyway of its own with Boot's defaults: it starts and its deliveries are processed whether its Flyway
 * runs before the bundle's (Boot's order), after it, or is added to an application that ran the bundle for a while,
 * with no setting beyond its own. The host's migrations: {@code src/test/resources/db/host-migration}.
 */
class HostTablesAndFlywayTest {
    private static final String SECRET = "whsec_host_tables_test";
    private static final String HOST_MIGRATIONS = "classpath:db/host-migration";
    private static final EmbeddedPostgres POSTGRES = TestParts.postgres();
    // its API only: the test sends its own deliveries
    private static final Sandbox SANDBOX = TestParts.sandbox(SandboxSettings.builder()
            .webhookUrl("http://127.0.0.1:9/hooks/metakit").webhookSecret(SECRET).accounts(2).operations(1)
            .faults(SandboxFaults.none()).apiPort(0).build());
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final AtomicLong TICKETS = new AtomicLong(9000);

    @AfterAll
    static void stop() throws IOException {
        SANDBOX.close();
        POSTGRES.close();
    }

    @Test
    void theHostsFlywayRunningBeforeTheBundlesAsBootOrdersIt() throws Exception {
        String database = newDatabase();
        try (ConfigurableApplicationContext host = start(database, Map.of("spring.flyway.locations", HOST_MIGRATIONS))) {
            assertADeliveryIsProcessed(host);
            assertHostTablesAreTheHosts(host);
        }
    }

    @Test
    void onTheHostsOwnPoolTooWhenTheHostOptsIn() throws Exception {
        String database = newDatabase();
        // not the default pool arrangement: the bundle borrows from Boot's DataSource, each connection given back with
        // the host's search_path, which the host's own queries below rely on (unqualified, as a host writes them)
        try (ConfigurableApplicationContext host = start(database, Map.of("spring.flyway.locations", HOST_MIGRATIONS,
                "metakit.database.data-source-bean", "dataSource"))) {
            assertADeliveryIsProcessed(host);
            // every connection the pool holds idle, the ones the bundle used among them, has the host's path
            HikariDataSource pool = host.getBean("dataSource", HikariDataSource.class);
            List<Connection> idle = new ArrayList<>();
            try {
                for (int i = pool.getHikariPoolMXBean().getIdleConnections(); i > 0; i--) {
                    idle.add(pool.getConnection());
                }
                assertThat(idle).hasSizeGreaterThan(1);
                for (Connection c : idle) {
                    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                            "select current_setting('search_path'), (select holder from accounts)")) {
                        rs.next();
                        assertThat(rs.getString(1)).isEqualTo("\"$user\", public");
                        assertThat(rs.getString(2)).isEqualTo("host");
                    }
                }
            } finally {
                for (Connection c : idle) {
                    c.close();
                }
            }
            assertHostTablesAreTheHosts(host);
        }
    }

    @Test
    void theHostsFlywayRunningAfterTheBundlesOnceTheApplicationIsReady() throws Exception {
        String database = newDatabase();
        try (ConfigurableApplicationContext host = start(database, Map.of("spring.flyway.enabled", "false"),
                FlywayWhenReady.class)) {
            JdbcTemplate jdbc = host.getBean(JdbcTemplate.class);
            assertThat(jdbc.queryForObject("select count(*) from metakit.metakit_schema_history", Long.class))
                    .isPositive();
            assertThat(host.getBean(FlywayWhenReady.class).applied).as("the host's migrations, after the bundle's")
                    .isEqualTo(2);
            assertADeliveryIsProcessed(host);
            assertHostTablesAreTheHosts(host);
        }
    }

    @Test
    void theHostsFlywayAddedToAnApplicationThatRanTheBundleFirst() throws Exception {
        String database = newDatabase();
        // the application before it had migrations of its own
        try (ConfigurableApplicationContext before = start(database, Map.of("spring.flyway.enabled", "false"))) {
            assertADeliveryIsProcessed(before);
        }
        // Boot's Flyway with its defaults (no baseline-on-migrate): public has none of the bundle's tables
        try (ConfigurableApplicationContext after = start(database, Map.of("spring.flyway.locations", HOST_MIGRATIONS))) {
            assertADeliveryIsProcessed(after);
            assertHostTablesAreTheHosts(after);
            assertThat(after.getBean(JdbcTemplate.class).queryForObject(
                    "select count(*) from metakit.webhook_inbox where processed_at is not null", Long.class))
                    .as("the deliveries of both runs").isEqualTo(2);
        }
    }

    /** The host's Flyway, run by the host once the application (and so the bundle) has started. */
    @Configuration(proxyBeanMethods = false)
    static class FlywayWhenReady implements ApplicationListener<ApplicationReadyEvent> {
        int applied;

        @Override
        public void onApplicationEvent(ApplicationReadyEvent event) {
            DataSource dataSource = event.getApplicationContext().getBean("dataSource", DataSource.class);
            applied = Flyway.configure().dataSource(dataSource).locations(HOST_MIGRATIONS).load().migrate()
                    .migrationsExecuted;
        }
    }

    private static ConfigurableApplicationContext start(String database, Map<String, String> settings,
                                                        Class<?>... more) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("server.port", "0");
        p.put("spring.datasource.url", POSTGRES.getJdbcUrl("postgres", database));
        p.put("spring.datasource.username", "postgres");
        p.put("metakit.webhook.secret", SECRET);
        p.put("metakit.api.url", SANDBOX.apiBaseUrl().toString());
        p.put("metakit.api.key", SANDBOX.apiKey());
        // the host stops within the test rather than after a graceful wait
        p.put("camel.main.shutdown-timeout", "5");
        p.putAll(settings);
        Class<?>[] sources = new Class<?>[more.length + 1];
        sources[0] = InboxHostApplication.class;
        System.arraycopy(more, 0, sources, 1, more.length);
        // as command-line arguments: over application.yaml, as a deployment's settings are
        String[] args = p.entrySet().stream().map(e -> "--" + e.getKey() + "=" + e.getValue()).toArray(String[]::new);
        return new SpringApplicationBuilder(sources).run(args);
    }

    /** One signed delivery, answered "stored", then processed by the bundle's worker. */
    private static void assertADeliveryIsProcessed(ConfigurableApplicationContext host) throws Exception {
        long ticket = TICKETS.incrementAndGet();
        byte[] body = ("{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":" + ticket + "}}")
                .getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        String port = host.getEnvironment().getProperty("local.server.port");
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/hooks/metakit"))
                .header("Content-Type", "application/json")
                .header("X-MetaKit-Event", "position.opened")
                .header("X-MetaKit-Signature", "t=" + t + ",v1=" + WebhookSender.sign(SECRET, t, body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).isEqualTo("stored");
        JdbcTemplate jdbc = host.getBean(JdbcTemplate.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject("select count(*) from"
                + " metakit.webhook_inbox where body like ? and processed_at is not null and failed_at is null",
                Long.class, "%\"ticket\":" + ticket + "}%") == 1);
    }

    /** The host's tables hold the host's rows only; its Flyway history holds its own migrations only. */
    private static void assertHostTablesAreTheHosts(ConfigurableApplicationContext host) {
        JdbcTemplate jdbc = host.getBean(JdbcTemplate.class);
        assertThat(jdbc.queryForList("select holder from public.accounts", String.class)).containsExactly("host");
        assertThat(jdbc.queryForList("select label from public.positions", String.class)).containsExactly("host");
        assertThat(jdbc.queryForList("select source from public.webhook_inbox", String.class)).containsExactly("host");
        assertThat(jdbc.queryForList("select script from public.flyway_schema_history where success order by"
                + " installed_rank", String.class)).containsExactly("V1__host_accounts_positions_inbox.sql",
                "V2__host_orders.sql");
        assertThat(jdbc.queryForObject("select count(*) from metakit.accounts where account_id = 1", Long.class))
                .as("the bundle's account row, in its own table").isOne();
    }

    private static String newDatabase() throws Exception {
        String name = "host_" + Long.toHexString(System.nanoTime());
        try (Connection c = POSTGRES.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("create database " + name);
        }
        return name;
    }
}
