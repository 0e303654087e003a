package dev.metakit.inbox.worker;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.metakit.inbox.support.TestEvents.event;
import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Two instances on one database: every row worked once, the periodic reconcile once per period, leases expire. */
class ScaleOutTest {
    private static final int INTERVAL_SECONDS = 3;
    private FakeMetaKit metakit;
    private final List<RunningInbox> instances = new ArrayList<>();

    @BeforeEach
    void start() {
        TestDatabase.truncateAll();
        metakit = new FakeMetaKit();
        Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);
        for (long account = 1; account <= 20; account++) {
            metakit.open(account, account * 100, "0.10", "0", "0", t0);
        }
        metakit.latency(5);
    }

    /** Two instances side by side on the one database, the periodic reconcile due every few seconds. */
    private void startTwoInstances() {
        Map<String, String> p = Map.of("metakit.reconcile.interval", INTERVAL_SECONDS + "s");
        instances.add(RunningInbox.againstFakeMetaKit(metakit, p));
        instances.add(RunningInbox.againstFakeMetaKit(metakit, p));
    }

    @AfterEach
    void stop() {
        instances.forEach(RunningInbox::close);
        metakit.close();
    }

    @Test
    void everyRowIsWorkedByOneInstanceOnceAndTheLastReconciledStateIsRight() throws Exception {
        startTwoInstances();
        for (int i = 0; i < 200; i++) {
            long account = 1 + (i % 20);
            RunningInbox target = instances.get(i % 2);
            byte[] body = ("{\"event\":\"position.modified\",\"account_id\":" + account + ",\"data\":{\"ticket\":"
                    + account * 100 + ",\"n\":" + i + "}}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            assertThat(target.postSigned(body, "position.modified").statusCode()).isEqualTo(200);
        }
        await().atMost(Duration.ofSeconds(30)).until(() ->
                scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
        assertThat(scalar("select count(*) from webhook_inbox")).isEqualTo(200);
        assertThat(scalar("select max(attempts) from webhook_inbox")).as("no row claimed twice").isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where claimed_by is not null")).isZero();
        assertThat(scalar("select count(*) from positions where status = 'open'")).isEqualTo(20);
    }

    @Test
    void thePeriodicReconcileRunsOncePerPeriodAcrossInstances() throws Exception {
        startTwoInstances();
        await().atMost(Duration.ofSeconds(20)).until(() ->
                scalar("select count(*) from reconcile_runs where trigger = 'periodic'") >= 3);
        List<Instant> starts = new ArrayList<>();
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(
                     "select started_at from reconcile_runs where trigger = 'periodic' order by started_at")) {
            while (rs.next()) {
                Timestamp ts = rs.getTimestamp(1);
                starts.add(ts.toInstant());
            }
        }
        for (int i = 1; i < starts.size(); i++) {
            assertThat(Duration.between(starts.get(i - 1), starts.get(i)))
                    .as("runs %d and %d", i - 1, i)
                    .isGreaterThanOrEqualTo(Duration.ofMillis(INTERVAL_SECONDS * 900L));
        }
    }

    @Test
    void rowsClaimedByAnInstanceThatDiedAreTakenOverWhenTheirLeaseRunsOut() throws Exception {
        // the claim a crashed instance leaves: rows leased to it, never finished
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, claimed_by, claimed_until, attempts)"
                + " select 'k' || g, 'position.opened', 1 + g % 20, convert_from(" + "'{\"event\":\"position.opened\","
                + "\"account_id\":'::bytea || (1 + g % 20)::text::bytea || '}'::bytea, 'UTF8'), 'dead-instance',"
                + " now() + interval '2 seconds', 1 from generate_series(1, 30) g");
        instances.add(RunningInbox.againstFakeMetaKit(metakit, Map.of()));
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is not null")).isZero();
        await().atMost(Duration.ofSeconds(20)).until(() ->
                scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
        assertThat(scalar("select min(attempts) from webhook_inbox")).isEqualTo(2);
    }

    @Test
    void aRejectedApiKeyTurnsReadinessDownWithoutUsingUpTheRowsAttempts() throws Exception {
        RunningInbox wrongKey = RunningInbox.againstFakeMetaKit(metakit, Map.of("metakit.api.key", "not-the-key",
                "metakit.worker.backoff-max-millis", "300", "metakit.worker.max-attempts", "2"));
        instances.add(wrongKey);
        wrongKey.postSigned(event("position.opened", 1, 100), "position.opened");
        await().atMost(Duration.ofSeconds(15)).until(() -> wrongKey.healthStatus() == 503);
        await().atMost(Duration.ofSeconds(15)).until(() ->
                scalar("select count(*) from webhook_inbox where last_error like '%401%'") == 1);
        // the worker keeps retrying (at least two more reconcile rounds: more rounds than the row has attempts), yet
        // the row is still waiting, not failed
        int rejectedSoFar = metakit.accountCallsAnswered(401);
        await().atMost(Duration.ofSeconds(15)).until(() -> metakit.accountCallsAnswered(401) >= rejectedSoFar + 4);
        assertThat(scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is null")).isEqualTo(1);
    }
}
