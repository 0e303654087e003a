package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static dev.metakit.inbox.worker.ClaimedRows.pending;
import static dev.metakit.inbox.worker.ClaimedRows.trade;
import static org.assertj.core.api.Assertions.assertThat;

/** What a claim takes and what becomes of its rows, on the test database (no worker, no CamelContext). */
class ClaimPolicyTest {
    private Claimant boot;
    private ClaimPolicy policy;

    @BeforeEach
    void clean() throws Exception {
        TestDatabase.truncateAll();
        boot = ClaimedRows.beatingBoot("claim-policy-test").self();
        policy = policy(ClaimedRows.CLAIMS);
    }

    private ClaimPolicy policy(InboxClaims claims) {
        return new ClaimPolicy(claims, boot, new TradeEvents("position.*"), 100, 1000, Duration.ofSeconds(30));
    }

    @Test
    void anAccountsTradeEventsAreOneWorkAndWhatIsNoTradeEventNeedsNoReconcile() throws Exception {
        trade("a1-first", 1, 10);
        trade("a1-second", 1, 11);
        trade("a2", 2, 20);
        pending("connected", "account.connected", 3L, "{\"event\":\"account.connected\",\"account_id\":3}");

        ClaimPolicy.Sorted sorted = policy.sort(policy.claim(Set.of()));

        assertThat(sorted.work()).hasSize(2);
        AccountWork account1 = sorted.work().stream().filter(w -> w.accountId() == 1).findFirst().orElseThrow();
        assertThat(account1.keys()).extracting(InboxKey::deliveryKey)
                .containsExactlyInAnyOrder("a1-first", "a1-second");
        assertThat(account1.hints()).extracting(h -> h.ticket()).containsExactlyInAnyOrder(10L, 11L);
        assertThat(sorted.noReconcile()).extracting(InboxKey::deliveryKey).containsExactly("connected");
        assertThat(sorted.accountsSeen()).containsExactlyInAnyOrder(1L, 2L, 3L);
        assertThat(sorted.deadLetters()).isEmpty();
    }

    @Test
    void aBodyNoRetryCanFixIsADeadLetterWithItsReason() throws Exception {
        pending("not-json", "position.opened", 1L, "not json at all");
        pending("not-object", "position.opened", 1L, "[1, 2]");
        pending("bad-ticket", "position.opened", 1L, "{\"account_id\":1,\"data\":{\"ticket\":\"x\"}}");
        pending("bad-time", "position.opened", 1L, "{\"account_id\":1,\"created_at\":\"yesterday\"}");
        pending("no-account", "position.opened", null, "{\"event\":\"position.opened\",\"data\":{\"ticket\":1}}");

        ClaimPolicy.Sorted sorted = policy.sort(policy.claim(Set.of()));

        Map<String, PoisonReason> reasons = sorted.deadLetters().stream()
                .collect(Collectors.toMap(d -> d.row().key(), ClaimPolicy.DeadLetter::reason));
        assertThat(reasons).containsExactlyInAnyOrderEntriesOf(Map.of(
                "not-json", PoisonReason.NOT_JSON, "not-object", PoisonReason.NOT_OBJECT,
                "bad-ticket", PoisonReason.BAD_TICKET, "bad-time", PoisonReason.MALFORMED,
                "no-account", PoisonReason.NO_ACCOUNT));
        assertThat(sorted.deadLetters()).extracting(ClaimPolicy.DeadLetter::message)
                .as("what is wrong, never the body").noneMatch(m -> m.contains("yesterday") || m.contains("json at"));
        assertThat(sorted.work()).isEmpty();
    }

    @Test
    void theAccountsThisInstanceIsStillWorkingAreLeftOutOfItsClaims() throws Exception {
        trade("a1", 1, 10);
        trade("a2", 2, 20);

        assertThat(policy.claim(Set.of(1L))).extracting(InboxRow::key).containsExactly("a2");
        assertThat(policy.claim(Set.of())).extracting(InboxRow::key).containsExactly("a1");
    }

    @Test
    void aClaimTheDatabaseCannotTakeIsNoClaimNotAFailure() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        PGSimpleDataSource down = new PGSimpleDataSource();
        down.setUrl("jdbc:postgresql://127.0.0.1:" + closedPort + "/inbox");

        assertThat(policy(new InboxClaims(down)).claim(Set.of())).isEmpty();
    }
}
