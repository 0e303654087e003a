package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The work an instance holds, on its own clock (nanoTime values given by the test): no database. */
class WorkInHandTest {
    private static final Duration LEASE = Duration.ofSeconds(2);
    private static final long LEASE_NANOS = LEASE.toNanos();

    private final WorkInHand work = new WorkInHand(LEASE);

    @Test
    void heldWorkIsRenewedUntilTwoLeasesBeforeItsLimitAndGivenUpAtIt() {
        work.hold(work(1, "k1", "k2"), 0);
        long limit = WorkInHand.MAX_HOLD_LEASES * LEASE_NANOS;

        assertThat(work.keysToRenew(limit - 2 * LEASE_NANOS - 1)).extracting(InboxKey::deliveryKey)
                .containsExactlyInAnyOrder("k1", "k2");
        assertThat(work.keysToRenew(limit - 2 * LEASE_NANOS))
                .as("its last lease runs out a lease before the limit, even if that renewal is written late").isEmpty();
        assertThat(work.giveUpOverdue(limit - 1)).isEmpty();
        assertThat(work.accounts()).containsExactly(1L);

        assertThat(work.giveUpOverdue(limit)).containsExactly(1L);
        assertThat(work.accounts()).isEmpty();
        assertThat(work.keys()).isEmpty();
    }

    @Test
    void settledWorkIsNoLongerHeldAndTheOtherAccountsStay() {
        work.hold(work(1, "a"), 0);
        work.hold(work(2, "b"), 0);

        work.release(1);

        assertThat(work.accounts()).containsExactly(2L);
        assertThat(work.keys()).extracting(InboxKey::deliveryKey).containsExactly("b");
        assertThat(work.keysToRenew(0)).extracting(InboxKey::deliveryKey).containsExactly("b");
    }

    private static AccountWork work(long account, String... keys) {
        List<InboxRow> rows = java.util.Arrays.stream(keys)
                .map(k -> new InboxRow(k, "position.modified", account, new byte[0], 1, Instant.EPOCH)).toList();
        return new AccountWork(account, rows, List.of());
    }
}
