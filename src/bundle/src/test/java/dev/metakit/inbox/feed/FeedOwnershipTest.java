package dev.metakit.inbox.feed;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Who may publish an account's feed, on the test database: boots beating in inbox_instances with the worker's default
 * dead-after (5 s), a "paused" boot being one whose heartbeat row is set 10 s back (what a SIGSTOP leaves behind), and
 * each boot's monotonic clock a test clock that moves only when the test moves it.
 */
class FeedOwnershipTest {
    private static final Duration DEAD_AFTER = Duration.ofSeconds(5);

    private final DataSource db = TestDatabase.dataSource();
    private final AtomicLong clockA = new AtomicLong();
    private final AtomicLong clockB = new AtomicLong();
    private Claimant a;
    private Claimant b;
    private FeedOwnership ownerA;
    private FeedOwnership ownerB;

    /** A restart of PostgreSQL counts as every boot's beat (InstanceLiveness): start dead-after after it. */
    @BeforeAll
    static void databaseUpLongerThanDeadAfter() {
        TestDatabase.upLongerThan(DEAD_AFTER);
    }

    @BeforeEach
    void twoBeatingBoots() throws Exception {
        TestDatabase.truncateAll();
        a = beating("node-a");
        b = beating("node-b");
        ownerA = new FeedOwnership(a, DEAD_AFTER, clockA::get);
        ownerB = new FeedOwnership(b, DEAD_AFTER, clockB::get);
    }

    @Test
    void oneLiveBootOwnsAnAccountAndConfirmingItKeepsItsEpoch() throws Exception {
        try (Connection c = db.getConnection()) {
            FeedOwnership.Lease first = ownerA.take(c, 7);
            assertThat(first).isNotNull();
            assertThat(first.epoch()).isEqualTo(1);
            assertThat(ownerB.take(c, 7)).as("a's while a beats").isNull();
            assertThat(ownerB.take(c, 8)).as("another account is free").isNotNull();

            FeedOwnership.Lease again = ownerA.take(c, 7);
            assertThat(again.epoch()).as("confirmed, not taken again").isEqualTo(1);
            assertThat(ownerA.notHeldByOthers(c, List.of(9L, 8L, 7L))).containsExactly(9L, 7L);
            assertThat(ownerB.notHeldByOthers(c, List.of(9L, 8L, 7L))).containsExactly(9L, 8L);
        }
    }

    @Test
    void aStaleOwnersAccountIsTakenWithTheNextEpochAndTheStaleOwnersMarkIsRefused() throws Exception {
        insertChange(7, 1);
        insertChange(7, 2);
        try (Connection c = db.getConnection()) {
            List<FeedChange> changes = ChangeStore.unpublished(c, 7, 10);
            FeedChange change1 = changes.get(0);
            FeedChange change2 = changes.get(1);
            FeedOwnership.Lease old = ownerA.take(c, 7);
            assertThat(ownerA.markPublished(c, old, List.of(change1))).isEqualTo(1);

            stopBeating(a);
            FeedOwnership.Lease taken = ownerB.take(c, 7);
            assertThat(taken).as("a stopped beating 10 s ago, dead-after is 5 s").isNotNull();
            assertThat(taken.epoch()).isEqualTo(2);

            // a wakes up with its old lease and the change it had sent meanwhile
            assertThat(ownerA.markPublished(c, old, List.of(change2))).as("fenced by the epoch").isZero();
            assertThat(scalar("select count(*) from position_changes where published_at is null")).isEqualTo(1);
            assertThat(ownerA.notHeldByOthers(c, List.of(7L))).as("b's now").isEmpty();
            assertThat(ownerB.markPublished(c, taken, List.of(change2))).isEqualTo(1);
        }
    }

    @Test
    void aLeaseRunsOutByTheBootsOwnClockBeforeTheDatabaseLetsAnotherTakeTheAccount() throws Exception {
        try (Connection c = db.getConnection()) {
            FeedOwnership.Lease lease = ownerA.take(c, 7); // a's clock reads 0
            long lasts = lease.validUntilNanos();
            // dead-after less the margin (1 s) and the age of a's beat (taken a moment ago)
            assertThat(Duration.ofNanos(lasts)).isBetween(Duration.ofSeconds(3), DEAD_AFTER.minus(ownerA.margin()));

            clockA.set(lasts - 1);
            assertThat(ownerA.valid(lease)).isTrue();
            assertThat(ownerA.renewed(c, lease)).as("valid: no need to ask").isSameAs(lease);
            clockA.set(lasts);
            assertThat(ownerA.valid(lease)).as("ran out: the process stood still, or did not renew").isFalse();

            // still a's in the database (it beats): confirmed at the same epoch, valid again from now
            FeedOwnership.Lease renewed = ownerA.renewed(c, lease);
            assertThat(renewed.epoch()).isEqualTo(lease.epoch());
            assertThat(ownerA.valid(renewed)).isTrue();
        }
    }

    @Test
    void aBootThatWokeUpAfterLosingTheAccountGetsNoLeaseForItEvenOnceItBeatsAgain() throws Exception {
        try (Connection c = db.getConnection()) {
            FeedOwnership.Lease lease = ownerA.take(c, 7);
            stopBeating(a);
            assertThat(ownerB.take(c, 7)).isNotNull();

            // a's process resumes: its heartbeat thread beats first, its clock has moved on by the pause
            new InstanceLiveness(db, a, Duration.ofSeconds(2)).beat();
            clockA.addAndGet(Duration.ofSeconds(30).toNanos());
            assertThat(ownerA.valid(lease)).isFalse();
            assertThat(ownerA.renewed(c, lease)).as("b owns it and beats").isNull();
            assertThat(ownerA.take(c, 7)).isNull();

            // b stops beating in turn: a may take it back, by the rules, at a new epoch; the old lease stays void
            stopBeating(b);
            assertThat(ownerA.renewed(c, lease)).as("taken back at epoch 3, not the lease's 1").isNull();
            assertThat(scalar("select epoch from feed_owners where account_id = 7")).isEqualTo(3);
            assertThat(ownerA.take(c, 7).epoch()).isEqualTo(3);
        }
    }

    @Test
    void aBootWhoseHeartbeatStoppedTakesNothingAndItsAccountsAreFreeOnceItsRowIsGone() throws Exception {
        try (Connection c = db.getConnection()) {
            stopBeating(a);
            assertThat(ownerA.take(c, 7)).as("not alive: no lease").isNull();

            new InstanceLiveness(db, a, Duration.ofSeconds(2)).beat();
            assertThat(ownerA.take(c, 7)).isNotNull();
            assertThat(ownerA.releaseAll(c)).isEqualTo(1);
            assertThat(ownerB.take(c, 7).epoch()).as("released: taken at once").isEqualTo(1);

            // a clean stop of b's worker removes its boot: its accounts are anyone's at once too
            new InstanceLiveness(db, b, Duration.ofSeconds(2)).leave();
            assertThat(ownerA.take(c, 7).epoch()).isEqualTo(2);
        }
    }

    private Claimant beating(String id) throws SQLException {
        Claimant c = Claimant.newBoot(id);
        new InstanceLiveness(db, c, Duration.ofSeconds(2)).beat();
        return c;
    }

    private static void stopBeating(Claimant boot) {
        exec("update inbox_instances set heartbeat_at = now() - interval '10 seconds' where boot_token = '"
                + boot.bootToken() + "'");
    }

    private long insertChange(long account, long seq) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(
                "insert into position_changes (account_id, seq, ticket, kind, status, changed, source)"
                        + " values (?, ?, 1, 'opened', 'open', array['status'], 'event') returning change_id")) {
            s.setLong(1, account);
            s.setLong(2, seq);
            try (var rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
