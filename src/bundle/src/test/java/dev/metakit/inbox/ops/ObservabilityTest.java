package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ReadinessCheck;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.apache.camel.health.HealthCheckRegistry;
import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

import static dev.metakit.inbox.support.Metrics.sample;
import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The real bundle, some traffic of every kind, and then every metric the operations guide names on /observe/metrics. */
class ObservabilityTest {
    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();

    /**
     * Camel's check of a route throws when the route goes between its listing and its look (a reload replacing the
     * route files' routes, seen in a run): the metrics refresh keeps the readiness gauges as they were, an ERROR of its
     * timer route never comes of it, and only a failure that lasts three refreshes is a WARN, with an INFO once it
     * ends. The refresh every 200 ms (METAKIT_METRICS_REFRESH) so that three come soon; nothing else depends on it.
     */
    @Test
    void aReadinessCheckThatThrowsIsNoErrorAndOnlyALastingOneIsAWarning() throws Exception {
        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR);
             LogCapture told = LogCapture.keeping(Level.INFO, line -> line.contains("Readiness gauges"))) {
            RunningInbox inbox = fixture.startWith(Map.of("metakit.metrics.refresh", "PT0.2S"));
            HealthCheckRegistry registry = HealthCheckHelper.getHealthCheckRegistry(inbox.camelContext());
            HealthCheck throwing = new ReadinessCheck("throws-as-a-route-gone-mid-reload") {
                @Override
                protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
                    throw new NullPointerException("Cannot invoke \"org.apache.camel.ServiceStatus.name()\"");
                }
            };
            registry.register(throwing);
            await().atMost(Duration.ofSeconds(20)).until(() -> told.lines().stream()
                    .anyMatch(l -> l.contains("could not be refreshed 3 times in a row")));
            registry.unregister(throwing);
            await().atMost(Duration.ofSeconds(20)).until(() -> told.lines().stream()
                    .anyMatch(l -> l.contains("Readiness gauges are refreshed again")));
            assertThat(told.lines()).as("one WARN for the lasting failure, one INFO for its end").hasSize(2);
            assertThat(errors.lines()).isEmpty();
        }
    }

    @Test
    void afterTrafficOfEveryKindEveryMetricIsScrapedWithAPlausibleValue() throws Exception {
        fixture.metakit().open(2, 20, "0.10", "0", "0", fixture.t0());
        fixture.metakit().webhooks("[{\"id\":\"wh_1\",\"url\":\"https://x/hooks\",\"lastDeliveryStatus\":\"failed\","
                + "\"lastDeliveryAt\":\"" + fixture.t0() + "\"}]");
        RunningInbox inbox = fixture.startWith(Map.of(
                "metakit.api.url", fixture.metakit().url(),
                "metakit.api.key", FakeMetaKit.API_KEY,
                "metakit.accounts", "2",
                "metakit.worker.poll-interval-millis", "200",
                "metakit.worker.backoff-base-millis", "50",
                "metakit.worker.backoff-max-millis", "100",
                "metakit.worker.max-attempts", "2",
                "metakit.status.interval", "1s",
                "metakit.metrics.refresh", "1s"));

        byte[] opened = event("position.opened", 2, 20);
        long t = System.currentTimeMillis() / 1000;
        String header = dev.metakit.inbox.support.TestSignatures.header(RunningInbox.SECRET, t, opened);
        assertThat(inbox.post(opened, header, "position.opened").body()).isEqualTo("stored");
        assertThat(inbox.post(opened, header, "position.opened").body()).isEqualTo("duplicate");
        assertThat(inbox.post(opened, "t=" + t + ",v1=" + "0".repeat(64), "position.opened").statusCode()).isEqualTo(400);
        // account 404 is unknown to MetaKit: its reconcile fails, is retried once, then the row is failed
        assertThat(inbox.postSigned(event("position.opened", 404, 1), "position.opened").statusCode()).isEqualTo(200);

        await().atMost(Duration.ofSeconds(20)).until(() ->
                TestDatabase.scalar("select count(*) from webhook_inbox where failed_at is not null") == 1
                        && TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is not null") == 1);

        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            String m = inbox.metrics();
            sample(m, "metakit_webhook_accepted_total").isEqualTo(3.0);
            sample(m, "metakit_webhook_stored_total").isEqualTo(2.0);
            sample(m, "metakit_webhook_duplicates_total").isEqualTo(1.0);
            sample(m, "metakit_webhook_rejected_total{reason=\"signature_mismatch\"}").isEqualTo(1.0);

            sample(m, "metakit_inbox_rows_processed_total").isEqualTo(1.0);
            sample(m, "metakit_inbox_rows_retried_total").isEqualTo(1.0);
            sample(m, "metakit_inbox_rows_failed_total").isEqualTo(1.0);

            sample(m, "metakit_reconciles_total{outcome=\"ok\",trigger=\"event\"}").isGreaterThanOrEqualTo(1.0);
            sample(m, "metakit_reconciles_total{outcome=\"failed\",trigger=\"event\"}").isEqualTo(2.0);
            sample(m, "metakit_reconciles_total{outcome=\"ok\",trigger=\"periodic\"}").isGreaterThanOrEqualTo(1.0);
            sample(m, "metakit_reconciles_total{outcome=\"ok\",trigger=\"status-watch\"}").isGreaterThanOrEqualTo(1.0);
            sample(m, "metakit_reconcile_duration_seconds_count{outcome=\"ok\",trigger=\"event\"}")
                    .isGreaterThanOrEqualTo(1.0);
            sample(m, "metakit_reconcile_duration_seconds_sum{outcome=\"ok\",trigger=\"event\"}")
                    .isGreaterThan(0.0).isLessThan(10.0);

            sample(m, "metakit_api_calls_total{endpoint=\"positions\",status=\"200\"}").isGreaterThanOrEqualTo(2.0);
            sample(m, "metakit_api_calls_total{endpoint=\"positions\",status=\"404\"}").isGreaterThanOrEqualTo(2.0);
            sample(m, "metakit_api_calls_total{endpoint=\"webhooks\",status=\"200\"}").isGreaterThanOrEqualTo(1.0);

            sample(m, "metakit_inbox_backlog").isEqualTo(0.0);
            sample(m, "metakit_inbox_failed").isEqualTo(1.0);
            sample(m, "metakit_inbox_oldest_age_seconds").isGreaterThanOrEqualTo(0.0);
            sample(m, "metakit_webhook_ack_seconds_count{status=\"200\"}").isEqualTo(3.0);
            sample(m, "metakit_webhook_ack_seconds_count{status=\"400\"}").isEqualTo(1.0);
            sample(m, "metakit_webhook_ack_seconds_max{status=\"200\"}").isGreaterThan(0.0).isLessThan(5.0);
            sample(m, "metakit_webhook_endpoint_status{endpoint=\"wh_1\",status=\"failed\"}").isEqualTo(1.0);
            sample(m, "metakit_webhook_endpoint_status{endpoint=\"wh_1\",status=\"succeeded\"}").isEqualTo(0.0);
        });
    }

    @Test
    void theBacklogGaugeShowsRowsWaitingAndTheAgeOfTheOldest() throws Exception {
        // no MetaKit: the trade event cannot be reconciled and stays in the backlog
        RunningInbox inbox = fixture.startWith(Map.of("metakit.metrics.refresh", "1s",
                "metakit.worker.backoff-base-millis", "60000", "metakit.worker.backoff-max-millis", "60000"));
        inbox.postSigned(event("position.opened", 3, 30), "position.opened");
        // its first reconcile's failure written (the account backing off a minute, the row's claim given up) before
        // the row is aged: that write would otherwise come after and give the row a turn of its own
        await().atMost(Duration.ofSeconds(20)).until(() -> TestDatabase.scalar("select count(*) from"
                + " inbox_account_backoff where account_id = 3") == 1 && TestDatabase.scalar("select count(*) from"
                + " webhook_inbox where claim_token is null") == 1);
        try (var c = TestDatabase.dataSource().getConnection(); var s = c.createStatement()) {
            // stored 90 s ago: its arrival and its first turn (next_attempt_at, when it was stored or put back)
            s.executeUpdate("update webhook_inbox set received_at = now() - interval '90 seconds',"
                    + " next_attempt_at = now() - interval '90 seconds'");
        }
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            String m = inbox.metrics();
            sample(m, "metakit_inbox_backlog").isEqualTo(1.0);
            sample(m, "metakit_inbox_oldest_age_seconds").isBetween(89.0, 200.0);
        });
    }
}
