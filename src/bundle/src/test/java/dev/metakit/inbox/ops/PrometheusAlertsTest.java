package dev.metakit.inbox.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.Prometheus;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.StoppablePostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shipped rules and dashboard against the real thing: Debian's Prometheus scraping a running instance (every
 * setting at its default, on a PostgreSQL of the test's own and a MetaKit double, under a steady trickle of signed
 * deliveries). Every dashboard query returns series; then the database is stopped (the 503 and readiness alerts
 * fire, and resolve once it is back) and MetaKit's API answers 500 (the reconcile alert fires, and resolves).
 * <p>
 * Time runs {@value #TIME_SCALE} times faster for the rules: {@link Prometheus#timeScaled} divides each alert's
 * {@code for:} and every range of the expressions by that factor (5 m becomes 10 s), and Prometheus scrapes and
 * evaluates every second, so a production scrape of 30 s is what the scaled rules see. The shipped file is not changed;
 * its thresholds and logic are what fire here. One instance boot and one Prometheus for the whole test.
 */
class PrometheusAlertsTest {
    static final int TIME_SCALE = 30;
    private static final int ACCOUNTS = 3;
    private static final Duration FIRE_WITHIN = Duration.ofSeconds(60);
    /**
     * the reconcile alert's 10 m window and 5 m {@code for:}, scaled: 20 s + 10 s, once the reconciles that succeeded
     * before the outage have left the window (about 30 s in all; twice that for a loaded machine)
     */
    private static final Duration RECONCILE_ALERT_FIRES_WITHIN = Duration.ofSeconds(90);
    private static final Duration RESOLVE_WITHIN = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<AutoCloseable> opened = new ArrayList<>();
    private Path dataDir;

    @AfterEach
    void stopAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        if (dataDir != null) {
            try (Stream<Path> paths = Files.walk(dataDir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void everyDashboardQueryReturnsSeriesAndTheDatabaseAndApiAlertsFireAndResolve() throws Exception {
        Prometheus.program("prometheus");
        dataDir = Files.createTempDirectory("prometheus-alerts-postgres-");
        StoppablePostgres postgres = open(new StoppablePostgres(dataDir));
        FakeMetaKit metakit = open(FakeMetaKit.withOnePositionEach(ACCOUNTS));
        // a webhook endpoint MetaKit lists, so that the endpoint-status panel has something to show
        metakit.webhooks("[{\"id\":\"wh_1\",\"url\":\"https://inbox.example/hooks/metakit\","
                + "\"lastDeliveryStatus\":\"succeeded\",\"lastDeliveryAt\":\"" + Instant.now() + "\"}]");
        Map<String, String> settings = new HashMap<>(postgres.bundleSettings());
        settings.put("metakit.api.url", metakit.url());
        settings.put("metakit.api.key", FakeMetaKit.API_KEY);
        RunningInbox inbox = open(RunningInbox.start(settings));
        Prometheus prometheus = open(Prometheus.scraping(inbox.managementUri("/observe/metrics"),
                Prometheus.timeScaled(Files.readString(PrometheusRulesTest.RULES), TIME_SCALE)));
        SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 2, 10, ACCOUNTS).start();
        opened.add(load::stop);

        everyDashboardQueryReturnsSeries(prometheus);
        assertThat(prometheus.alerts()).as("no alert while everything works").isEmpty();

        long t = System.nanoTime();
        postgres.stop();
        await("the 503 and readiness alerts fire").atMost(FIRE_WITHIN).pollInterval(Duration.ofMillis(500))
                .until(() -> prometheus.firing("MetaKitInboxDeliveriesUnavailable", Map.of("job", Prometheus.JOB))
                        && prometheus.firing("MetaKitInboxNotReady", Map.of("check", "metakit/inbox-database")));
        long databaseAlertsFired = sinceMillis(t);
        assertThat(prometheus.inactive("MetaKitInboxNoHeartbeat")).as("the instance still reports").isTrue();
        assertThat(prometheus.targetHealth()).isEqualTo("up");
        t = System.nanoTime();
        postgres.start();
        await("the 503 and readiness alerts resolve").atMost(RESOLVE_WITHIN).pollInterval(Duration.ofMillis(500))
                .until(() -> prometheus.inactive("MetaKitInboxDeliveriesUnavailable")
                        && prometheus.inactive("MetaKitInboxNotReady"));
        long databaseAlertsResolved = sinceMillis(t);

        t = System.nanoTime();
        metakit.outage(500);
        await("the reconcile alert fires").atMost(RECONCILE_ALERT_FIRES_WITHIN).pollInterval(Duration.ofMillis(500))
                .until(() -> prometheus.firing("MetaKitInboxReconcilesFailing", Map.of("job", Prometheus.JOB)));
        long apiAlertFired = sinceMillis(t);
        t = System.nanoTime();
        metakit.recover();
        await("the reconcile alert resolves").atMost(RESOLVE_WITHIN).pollInterval(Duration.ofMillis(500))
                .until(() -> prometheus.inactive("MetaKitInboxReconcilesFailing"));
        System.out.printf("PROMETHEUS rules at 1/%d time: database stopped -> 503 and readiness alerts firing after %d ms,"
                        + " resolved %d ms after its start; API answering 500 -> reconcile alert firing after %d ms,"
                        + " resolved %d ms after its recovery%n", TIME_SCALE, databaseAlertsFired,
                databaseAlertsResolved, apiAlertFired, sinceMillis(t));
    }

    private static long sinceMillis(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
    }

    /**
     * Each query of ops/grafana/metakit-inbox.json, with its variables substituted as Grafana does: the datasource is
     * the panel's, $job the first value of its own query (label_values), $instance "All" (its allValue), and
     * $__rate_interval Grafana's max($__interval + scrape interval, 4 × scrape interval), 4 s with the 1 s scrape.
     */
    private static void everyDashboardQueryReturnsSeries(Prometheus prometheus) throws IOException {
        JsonNode dashboard = JSON.readTree(RunningInbox.basedir().resolve("ops/grafana/metakit-inbox.json").toFile());
        List<String> queries = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            if (!panel.path("type").asText().equals("row")) {
                assertThat(panel.path("datasource").path("uid").asText()).as(panel.path("title").asText())
                        .isEqualTo("${datasource}");
                panel.path("targets").forEach(t -> queries.add(t.path("expr").asText()));
            }
        }
        assertThat(queries).hasSizeGreaterThanOrEqualTo(20);
        String rateInterval = Math.max(2 * Prometheus.SCRAPE_INTERVAL.toSeconds(),
                4 * Prometheus.SCRAPE_INTERVAL.toSeconds()) + "s";
        await("every dashboard query returns series").atMost(Duration.ofSeconds(45)).pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions()
                .untilAsserted(() -> {
                    String job = prometheus.labelValues("job", "metakit_webhook_accepted_total").get(0);
                    List<String> empty = new ArrayList<>();
                    for (String q : queries) {
                        String promql = q.replace("$job", job).replace("$instance", ".*")
                                .replace("$__rate_interval", rateInterval);
                        if (prometheus.query(promql).isEmpty()) {
                            empty.add(promql);
                        }
                    }
                    assertThat(empty).as("dashboard queries without series").isEmpty();
                });
    }

    private <T extends AutoCloseable> T open(T closeable) {
        opened.add(closeable);
        return closeable;
    }
}
