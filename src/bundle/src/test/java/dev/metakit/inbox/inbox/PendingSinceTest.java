package dev.metakit.inbox.inbox;

import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a claim looks: from where the pending rows begin ({@code inbox_pending_since}) to a day ahead. Moving the
 * start up never passes a pending row, and what makes an older row pending again (a replay, a requeue, a row written
 * by hand) is claimed: at once for a replay or requeue, after the next move for a row written by hand. On the test
 * database, whose migration made the kept partition (every time before today) and the days from today.
 */
class PendingSinceTest {
    private static final Claimant WORKER = Claimant.newBoot("worker");
    private final InboxClaims claims = new InboxClaims(TestDatabase.dataSource());
    private final InboxAdmin admin = new InboxAdmin(TestDatabase.dataSource());

    @BeforeEach
    void clean() throws Exception {
        TestDatabase.truncateAll();
        new InstanceLiveness(TestDatabase.dataSource(), WORKER, Duration.ofSeconds(2)).beat();
    }

    @Test
    void theStartMovesUpToTwoHoursAgoOnceTheOlderRowsAreWorkedAndNeverPastAPendingOne() throws Exception {
        store("old", "now() - interval '3 days'");
        store("new", "now()");

        assertThat(claims.advancePendingSince()).as("the kept partition holds a pending row: from its start").isNull();
        assertThat(keys(claim())).containsExactlyInAnyOrder("old", "new");

        exec("update webhook_inbox set processed_at = now(), claim_token = null, claimed_by = null,"
                + " claimed_until = null");
        Instant before = TestDatabase.clock();
        Instant since = claims.advancePendingSince();
        Instant after = TestDatabase.clock();

        assertThat(since).as("no pending row left before now: two hours before now")
                .isBetween(before.minus(Duration.ofHours(2)), after.minus(Duration.ofHours(2)));
        assertThat(TestDatabase.instant("select since from inbox_pending_since")).isEqualTo(since);
        store("today", "now()");
        assertThat(keys(claim())).containsExactly("today");
    }

    @Test
    void aRowWrittenByHandBeforeTheStartIsClaimedAfterTheNextMove() throws Exception {
        claims.advancePendingSince();
        store("by-hand", "now() - interval '3 days'");
        assertThat(claim()).as("before the start: not looked at yet").isEmpty();

        assertThat(claims.advancePendingSince()).isNull();

        assertThat(keys(claim())).containsExactly("by-hand");
    }

    @Test
    void aRequeuedDeadLetterAndAReplayedRowBeforeTheStartAreClaimedAtTheNextClaim() throws Exception {
        store("dead", "now() - interval '3 days'");
        store("done", "now() - interval '2 days'");
        exec("update webhook_inbox set failed_at = now(), last_error = 'gave up' where delivery_key = 'dead'");
        exec("update webhook_inbox set processed_at = now() where delivery_key = 'done'");
        Instant twoHoursAgo = claims.advancePendingSince();
        assertThat(twoHoursAgo).isNotNull();

        assertThat(admin.requeueFailed(null, "dead")).isEqualTo(1);
        assertThat(TestDatabase.instant("select since from inbox_pending_since")).as("moved back to the row")
                .isEqualTo(TestDatabase.instant("select signed_at from webhook_inbox where delivery_key = 'dead'"));
        assertThat(keys(claim())).containsExactly("dead");

        assertThat(admin.replay(null, null, null)).as("every row not under a live lease: 'done'").isEqualTo(1);
        assertThat(keys(claim())).containsExactly("done");
    }

    @Test
    void withoutItsRowTheClaimLooksEverywhereAndTheNextMoveWritesItAgain() throws Exception {
        exec("delete from inbox_pending_since");
        store("old", "now() - interval '3 days'");

        assertThat(keys(claim())).containsExactly("old");
        assertThat(claims.advancePendingSince()).isNull();
        assertThat(TestDatabase.text("select since::text from inbox_pending_since")).isEqualTo("-infinity");
    }

    @Test
    void theBacklogCountsUpToItsBoundThenTakesTheIndexesEstimateAndFindsTheOldestRowAccountByAccount()
            throws Exception {
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                + " select 'k' || g, 'position.opened', g % 7, '{}', now() - (g || ' seconds')::interval"
                + " from generate_series(1, " + (InboxAdmin.COUNTED_UP_TO + 500) + ") g");
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                + " values ('no-account', 'account.connected', null, '{}', now() - interval '2 days')");

        InboxAdmin.Backlog before = admin.backlog();
        assertThat(before.pending()).as("past the bound, before any analyze: at least what was counted")
                .isEqualTo(InboxAdmin.COUNTED_UP_TO + 1);
        assertThat(before.oldestPendingAge()).as("the row without an account, put in two days ago")
                .isBetween(Duration.ofDays(2), Duration.ofDays(2).plusMinutes(1));

        exec("analyze webhook_inbox");
        assertThat(admin.backlog().pending()).as("PostgreSQL's estimate of the pending index's entries")
                .isBetween(InboxAdmin.COUNTED_UP_TO + 1L, InboxAdmin.COUNTED_UP_TO + 1_000L);
        exec("delete from webhook_inbox where delivery_key <> 'no-account'");
        assertThat(admin.backlog().pending()).as("within the bound: counted").isEqualTo(1);
    }

    private List<InboxRow> claim() throws Exception {
        return claims.claim(WORKER, 10, Duration.ofMinutes(1));
    }

    private static List<String> keys(List<InboxRow> rows) {
        return rows.stream().map(InboxRow::key).toList();
    }

    private static void store(String key, String signedAt) {
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, signed_at) values ('" + key
                + "', 'position.opened', 1, '{}', " + signedAt + ")");
    }
}
