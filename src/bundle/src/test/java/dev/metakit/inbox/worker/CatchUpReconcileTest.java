package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

import static dev.metakit.inbox.inbox.InboxClaims.CATCH_UP_BEHIND;
import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bundle settles an account's backlog behind its retry with one reconcile that never reads the backlog's rows, and
 * loses nothing they named: a position opened and closed while the account backed off, whose two deliveries are in
 * the backlog and are never claimed, is recorded closed from the account's deals.
 */
class CatchUpReconcileTest {

    @Test
    void aBacklogSettledUnreadStillRecordsAPositionOpenedAndClosedInsideIt() throws Exception {
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        try (FakeMetaKit metakit = FakeMetaKit.onCleanDatabase(1)) {
            // ticket 777 opened and closed during the backoff: in no positions list, only in the deals
            metakit.deal(1, 9001, 777, "in", "0.10", "1.08000", "0", now.minusSeconds(50));
            metakit.deal(1, 9002, 777, "out", "0.10", "1.08100", "10.00", now.minusSeconds(40));
            // the backlog, stored while the account backed off: ticket 100's modifications a minute ago, then 777's
            // two deliveries (later, so the retry's probe, the oldest row, is not one of them)
            rows("position.modified", 100, CATCH_UP_BEHIND + 100, 60);
            rows("position.opened", 777, 1, 45);
            rows("position.closed", 777, 1, 35);
            // the account's reconciles failed before and its retry is due: the state a MetaKit outage leaves
            exec("insert into inbox_account_backoff (account_id, retry_at, failures) values (1, now(), 5)");
            new InboxClaims(TestDatabase.dataSource()).advancePendingSince();

            // the schedules off: a full reconcile of the account would read its deals too (the account is not known
            // at start, so the startup reconcile has none to read)
            try (RunningInbox inbox = RunningInbox.againstFakeMetaKit(metakit, Map.of(
                    "metakit.reconcile.interval", "PT1H", "metakit.status.interval", "PT1H"))) {
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
                        scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
            }
            assertThat(scalar("select count(*) from inbox_account_settled where account_id = 1")).isEqualTo(1);
            assertThat(scalar("select count(*) from webhook_inbox where body like '%\"ticket\":777%'"
                    + " and attempts = 0 and processed_at is not null"))
                    .as("777's deliveries settled without ever being claimed").isEqualTo(2);
            assertThat(scalar("select count(*) from positions where account_id = 1 and ticket = 777"
                    + " and status = 'closed' and close_deal_ticket = 9002")).as("777 recorded closed from the deals")
                    .isEqualTo(1);
            assertThat(TestDatabase.text("select string_agg(distinct source, ',') from position_changes"
                    + " where ticket = 777")).as("by the retry's reconcile, not a full one").isEqualTo("event");
            assertThat(scalar("select count(*) from webhook_inbox where attempts = 1 and processed_at is not null"))
                    .as("claimed: the probe alone").isEqualTo(1);
            assertThat(metakit.calls("positions")).as("the backlog: one reconcile").isEqualTo(1);
        }
    }

    /** {@code count} deliveries of account 1 about {@code ticket}, stored {@code ageSeconds} ago. */
    private static void rows(String event, long ticket, int count, int ageSeconds) throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                        + " select ? || '-' || n, ?, 1, ?, now() - ? * interval '1 second'"
                        + " from generate_series(1, ?) n")) {
            ps.setString(1, event + "-" + ticket + "-" + ageSeconds);
            ps.setString(2, event);
            ps.setString(3, new String(event(event, 1, ticket), java.nio.charset.StandardCharsets.UTF_8));
            ps.setInt(4, ageSeconds);
            ps.setInt(5, count);
            ps.executeUpdate();
        }
    }
}
