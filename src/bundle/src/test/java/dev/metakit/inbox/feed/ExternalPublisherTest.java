package dev.metakit.inbox.feed;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.ShippedProperties;
import dev.metakit.inbox.support.ShippedWorker;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.worker.InboxWorker;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.support.service.ServiceHelper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * What Debezium's outbox router reads ({@code payload}), and the bundle with {@code metakit.feed.publisher=external}:
 * its publisher off, retention by reconcile time, replay refused. DebeziumOutboxIT runs Debezium itself.
 */
class ExternalPublisherTest {
    private final DataSource db = TestDatabase.dataSource();
    private final ObjectMapper json = new ObjectMapper();
    private final List<String> sent = Collections.synchronizedList(new ArrayList<>());
    private CamelContext context;
    private ChangePublisher publisher;
    private InboxWorker worker;

    @BeforeEach
    void cleanSlate() {
        TestDatabase.truncateAll();
    }

    @AfterEach
    void stop() {
        ServiceHelper.stopService(publisher, worker, context); // each one started, in this order
    }

    @Test
    void theStoredPayloadIsTheJsonTheInProcessPublisherBuildsFromTheStoredRow() throws Exception {
        // values the table stores otherwise than given: a negative scale (numeric keeps 10), nanoseconds
        // (timestamptz keeps microseconds), trailing zeros (numeric keeps them, as the publisher reads them back)
        FeedChange odd = new FeedChange(0, 5, 0, 77, "closed", "closed", "EURUSD", "buy", new BigDecimal("1E+1"),
                new BigDecimal("1.08450"), Instant.parse("2026-12-03T07:01:02.123456789Z"), null, BigDecimal.ZERO,
                Instant.parse("2026-12-03T08:00:00Z"), 501L, new BigDecimal("1.0865"), new BigDecimal("-20.00"),
                List.of("status", "closedAt", "closePrice", "profit"), "event", null);
        FeedChange plain = new FeedChange(0, 5, 0, 78, "opened", "open", "GBPUSD", "sell", new BigDecimal("0.10"),
                new BigDecimal("1.25"), Instant.parse("2026-12-03T07:00:00Z"), new BigDecimal("1.3"), null, null,
                null, null, null, List.of("status", "volume"), "periodic", null);
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            ChangeStore.append(c, odd);
            ChangeStore.append(c, plain);
            c.commit();
        }

        List<FeedChange> stored;
        List<String> payloads = new ArrayList<>();
        try (Connection c = db.getConnection()) {
            stored = ChangeStore.unpublished(c, 5, 10);
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("select payload::text from position_changes order by seq")) {
                while (rs.next()) {
                    payloads.add(rs.getString(1));
                }
            }
        }
        assertThat(stored).hasSize(2);
        for (int i = 0; i < 2; i++) {
            assertThat(payloads.get(i)).as("seq %d", i + 1).isEqualTo(json.writeValueAsString(stored.get(i).toJson()));
        }
        var first = json.readTree(payloads.get(0));
        assertThat(first.get("id").asText()).isEqualTo("5:1");
        assertThat(first.get("position").get("volume").toString()).isEqualTo("10");
        assertThat(first.get("position").get("openedAt").asText()).isEqualTo("2026-12-03T07:01:02.123457Z");
        assertThat(first.get("reconciledAt").asText()).isEqualTo(stored.get(0).reconciledAt().toString());
    }

    @Test
    void externalSwitchesThePublisherOffAndLeavesEveryChangeUnpublished() throws Exception {
        append(3, 4);
        publisher = publisher("external");

        assertThat(publisher.isInProcess()).isFalse();
        assertThat(publisher.publishDue()).as("accounts handed to the pool").isZero();
        assertThat(sent).isEmpty();
        assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null"))
                .isEqualTo(4);
    }

    @Test
    void theBundleWithExternalIsReadyItsFeedPollRunsAndPublishesNothingWhichTheDefaultThenPublishes() throws Exception {
        // the one setting this test is about; everything else as a user gets it
        try (RunningInbox inbox = RunningInbox.start(Map.of("metakit.feed.publisher", "external"))) {
            append(4, 2);
            NotifyBuilder polls = new NotifyBuilder(inbox.camelContext()).fromRoute("metakit-change-feed-poll")
                    .whenCompleted(4).create();
            assertThat(polls.matches(20, TimeUnit.SECONDS)).as("the feed's poll ran").isTrue();

            assertThat(TestDatabase.scalar("select count(*) from position_changes where published_at is null"))
                    .isEqualTo(2);
            HttpResponse<String> ready = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    inbox.managementUri("/observe/health/ready")).GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
            assertThat(ready.body()).doesNotContain("DOWN");
            // the feed's meters are registered with the first metrics refresh
            await().atMost(Duration.ofSeconds(20)).until(() -> inbox.metrics().contains("metakit_feed_changes_written"));
            assertThat(inbox.metrics()).doesNotContain("metakit_feed_lag");
        }
        // by default the same bundle publishes them, and shows its lag
        try (RunningInbox inbox = RunningInbox.start(Map.of())) {
            await().atMost(Duration.ofSeconds(20)).until(() -> TestDatabase.scalar(
                    "select count(*) from position_changes where published_at is null") == 0);
            await().atMost(Duration.ofSeconds(20)).until(() -> inbox.metrics().contains("metakit_feed_changes_written"));
            assertThat(inbox.metrics()).contains("metakit_feed_lag_seconds");
        }
    }

    @Test
    void inProcessIsTheDefaultAndPublishes() throws Exception {
        append(3, 1);
        ChangePublisher defaults = new ChangePublisher();
        assertThat(defaults.isInProcess()).isTrue();
        publisher = publisher("in-process");

        // the first call starts the feed, whose listener offers every due account as it connects: either may be the
        // one that hands account 3 over, so what is asserted is the outcome, the change sent once and marked published
        publisher.publishDue();
        await().atMost(Duration.ofSeconds(10)).until(() -> TestDatabase.scalar(
                "select count(*) from position_changes where published_at is null") == 0);
        assertThat(sent).hasSize(1);
        assertThat(json.readTree(sent.get(0)).get("id").asText()).isEqualTo("3:1");
    }

    @Test
    void withExternalRetentionDeletesByReconcileTimeAndReplayRefuses() throws Exception {
        append(1, 3);
        append(2, 2);
        // account 1's changes are 8 days old and were never marked published (nothing marks them with Debezium)
        TestDatabase.exec("update position_changes set reconciled_at = now() - interval '8 days'"
                + " where account_id = 1");
        FeedRetention ops = new FeedRetention();
        ops.setDataSource(db);
        ops.setRetention("P7D");
        ops.setBatchSize(2);
        ops.setPublisher("external");

        assertThat(ops.prune()).isEqualTo(3);
        assertThat(TestDatabase.scalar("select count(*) from position_changes where account_id = 1")).isZero();
        assertThat(TestDatabase.scalar("select count(*) from position_changes where account_id = 2")).isEqualTo(2);
        FeedMaintenance replays = new FeedMaintenance(db);
        replays.setPublisher("external");
        assertThatThrownBy(() -> replays.replayAccount(2, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("METAKIT_FEED_PUBLISHER=external");
        assertThatThrownBy(() -> replays.replaySince("2026-12-01T00:00:00Z"))
                .isInstanceOf(IllegalStateException.class);

        // in-process (the default), the same rows stay: unpublished ones are never pruned
        TestDatabase.exec("update position_changes set reconciled_at = now() - interval '8 days'");
        FeedRetention inProcess = new FeedRetention();
        inProcess.setDataSource(db);
        inProcess.setRetention("P7D");
        inProcess.setBatchSize(2);
        assertThat(inProcess.prune()).isZero();
    }

    @Test
    void anUnknownPublisherIsRefused() {
        assertThatThrownBy(() -> new ChangePublisher().setPublisher("debezium"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("METAKIT_FEED_PUBLISHER must be one of in-process, external, got 'debezium'");
    }

    private ChangePublisher publisher(String mode) throws Exception {
        context = ShippedProperties.camelContext(new RouteBuilder() {
            @Override
            public void configure() {
                from(ChangePublisher.DEFAULT_OUTLET).process(e -> sent.add(e.getMessage().getBody(String.class)));
            }
        });
        context.start();
        ChangePublisher p = new ChangePublisher();
        p.setCamelContext(context);
        p.setDataSource(db);
        // the boot whose heartbeat holds the published accounts (feed_owners), as routes/beans.camel.yaml wires it
        worker = ShippedWorker.create("external-publisher-test");
        worker.start();
        p.setHeartbeat(worker);
        p.setConcurrency(1);
        p.setBackoffBaseMillis(100);
        p.setBackoffMaxMillis(1000);
        p.setPublisher(mode);
        return p;
    }

    private void append(long account, int changes) throws Exception {
        try (Connection c = db.getConnection()) {
            for (int i = 0; i < changes; i++) {
                ChangeStore.append(c, new FeedChange(0, account, 0, 100 + i, "opened", "open", "EURUSD", "buy",
                        new BigDecimal("0.10"), new BigDecimal("1.1"), Instant.parse("2026-12-03T07:00:00Z"), null,
                        null, null, null, null, null, List.of("status"), "event", null));
            }
        }
    }
}
