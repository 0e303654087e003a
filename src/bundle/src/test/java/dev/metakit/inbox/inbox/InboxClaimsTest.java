package dev.metakit.inbox.inbox;

import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class InboxClaimsTest {
    private static final Claimant TEST = Claimant.newBoot("test");
    private static final Claimant A = Claimant.newBoot("a");
    private static final Claimant B = Claimant.newBoot("b");

    @BeforeEach
    void clean() throws Exception {
        TestDatabase.truncateAll();
        // beating: their claims are live (a claim of a boot without a heartbeat is anyone's)
        for (Claimant c : List.of(TEST, A, B)) {
            new InstanceLiveness(TestDatabase.dataSource(), c, Duration.ofSeconds(2)).beat();
        }
    }

    @Test
    void aRowWithAnEventButNoAccountIsClaimedWithoutAnAccountNotAsAccountZero() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("insert into webhook_inbox (delivery_key, event, account_id, body) values"
                    + " ('k1', 'position.opened', null, 'x'), ('k2', 'position.opened', 7, 'y')");
        }
        List<InboxRow> rows = new InboxClaims(TestDatabase.dataSource()).claim(TEST, 10, Duration.ofSeconds(30));
        assertThat(rows).extracting(InboxRow::key, InboxRow::accountId)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("k1", null),
                        org.assertj.core.groups.Tuple.tuple("k2", 7L));
    }

    @Test
    void aClaimTakesTheDueRowsOfTheAccountsOfItsBatchWholeButNoRowLeasedOrWaitingForItsRetry() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement()) {
            // interleaved: a1 a2 a3 a1 a2 a3 ... in next_attempt_at order
            for (int i = 0; i < 9; i++) {
                long account = 1 + i % 3;
                s.executeUpdate("insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                        + " values ('k" + i + "', 'position.modified', " + account + ", 'x', now() - interval '"
                        + (100 - i) + " seconds')");
            }
            s.executeUpdate("insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at) values"
                    + " ('retry-later', 'position.modified', 1, 'x', now() + interval '1 hour')");
            s.executeUpdate("insert into webhook_inbox (delivery_key, event, account_id, body, claimed_by,"
                    + " claimed_until) values ('leased', 'position.modified', 2, 'x', 'other', now() + interval '1 minute')");
            s.executeUpdate("insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at) values"
                    + " ('no-account', 'account.connected', null, 'x', now() - interval '200 seconds')");
        }
        InboxClaims queue = new InboxClaims(TestDatabase.dataSource());

        List<InboxRow> first = queue.claim(TEST, 1, 100, Duration.ofSeconds(30));

        // a batch of 1: the first account (1) with every due, unleased row of it, and one row without an account
        assertThat(first).extracting(InboxRow::key).containsExactlyInAnyOrder("no-account", "k0", "k3", "k6");
        assertThat(first).allSatisfy(r -> assertThat(r.attempts()).isEqualTo(1));
        List<InboxRow> second = queue.claim(TEST, 1, 100, Duration.ofSeconds(30));
        assertThat(second).extracting(InboxRow::key).containsExactlyInAnyOrder("k1", "k4", "k7");
        // a cap below an account's rows: the oldest first, the rest in the next claim
        List<InboxRow> capped = queue.claim(TEST, 1, 2, Duration.ofSeconds(30));
        assertThat(capped).extracting(InboxRow::key).containsExactlyInAnyOrder("k2", "k5");
        assertThat(queue.claim(TEST, 10, 100, Duration.ofSeconds(30))).extracting(InboxRow::key)
                .containsExactly("k8");
        assertThat(queue.claim(TEST, 10, 100, Duration.ofSeconds(30))).isEmpty();
    }

    @Test
    void aRenewedLeaseKeepsItsRowsFromOtherInstancesAndOnlyItsOwnerCanRenewIt() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("insert into webhook_inbox (delivery_key, event, account_id, body) values"
                    + " ('k1', 'position.opened', 1, 'x'), ('k2', 'position.opened', 2, 'y')");
        }
        InboxClaims queue = new InboxClaims(TestDatabase.dataSource());
        assertThat(queue.claim(A, 10, Duration.ofMillis(300))).hasSize(2);

        assertThat(queue.renew(A, StoredKeys.of("k1"), Duration.ofMinutes(1))).isEqualTo(1);
        assertThat(queue.renew(B, StoredKeys.of("k2"), Duration.ofMinutes(1))).as("not b's to renew").isZero();

        // k2's lease runs out and another instance takes it; k1's was renewed and stays with its owner
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() ->
                TestDatabase.scalar("select count(*) from webhook_inbox where claimed_until < now()") == 1);
        assertThat(queue.claim(B, 10, Duration.ofMinutes(1))).extracting(InboxRow::key).containsExactly("k2");
        assertThat(queue.renew(A, StoredKeys.of("k1", "k2"), Duration.ofMinutes(1)))
                .as("a's lease on k2 ended when b claimed it").isEqualTo(1);
        queue.markProcessed(A, StoredKeys.of("k1"));
        assertThat(queue.renew(A, StoredKeys.of("k1"), Duration.ofMinutes(1))).as("processed rows hold no lease")
                .isZero();
    }
}
