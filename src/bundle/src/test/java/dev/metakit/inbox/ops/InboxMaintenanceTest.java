package dev.metakit.inbox.ops;

import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static dev.metakit.inbox.support.InboxRows.row;
import static dev.metakit.inbox.support.InboxRows.rows;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class InboxMaintenanceTest {
    private final InboxMaintenance maintenance = new InboxMaintenance(TestDatabase.dataSource());

    @BeforeEach
    void clean() {
        TestDatabase.truncateAll();
    }

    @Test
    void replayingAnAccountPutsItsProcessedAndFailedRowsBackAsNeverWorked() throws Exception {
        row("a1", 2, 5, "processed");
        row("a2", 2, 1, "failed");
        row("b1", 3, 5, "processed");
        assertThat(maintenance.replay(2L, null, null)).isEqualTo(2);
        assertThat(scalar("select count(*) from webhook_inbox where account_id = 2 and processed_at is null"
                + " and failed_at is null and attempts = 0 and last_error is null and next_attempt_at <= now()"))
                .isEqualTo(2);
        assertThat(scalar("select count(*) from webhook_inbox where delivery_key = 'b1' and processed_at is not null"))
                .isEqualTo(1);
    }

    @Test
    void replayingATimeRangeTakesRowsReceivedFromInclusiveToExclusiveOfEveryAccount() throws Exception {
        row("old", 2, 48, "processed");
        row("mid", 3, 10, "processed");
        row("new", 2, 1, "processed");
        Instant now = Instant.now();
        assertThat(maintenance.replayReceived(null, now.minus(Duration.ofHours(24)), now.minus(Duration.ofHours(2))))
                .isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is null and delivery_key = 'mid'"))
                .isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is null")).isEqualTo(1);
    }

    @Test
    void aRowUnderALiveLeaseIsLeftToTheRunThatHoldsIt() throws Exception {
        row("busy", 2, 1, "claimed");
        assertThat(maintenance.replay(2L, null, null)).isZero();
        assertThatThrownBy(() -> maintenance.replayReceived(null, Instant.now(), Instant.now().minusSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void requeueingFailedRowsOfOneAccountLeavesTheOthersFailed() throws Exception {
        row("f2", 2, 1, "failed");
        row("f3", 3, 1, "failed");
        assertThat(maintenance.requeueFailedOfAccount(2)).isEqualTo(1);
        assertThat(scalar("select count(*) from webhook_inbox where failed_at is not null")).isEqualTo(1);
        assertThat(maintenance.requeueFailed()).isEqualTo(1);
    }

    @Test
    void pruningDeletesOldProcessedRowsInBatchesAndKeepsFailedPendingAndRecentRows() throws Exception {
        rows("old-processed-", 7, 2, 200, "processed");
        row("old-failed", 2, 200, "failed");
        row("old-pending", 2, 200, "pending");
        row("recent-processed", 2, 1, "processed");
        assertThat(maintenance.prune(Duration.ofDays(7), 3)).isEqualTo(7);
        assertThat(scalar("select count(*) from webhook_inbox")).isEqualTo(3);
        assertThat(scalar("select count(*) from webhook_inbox where delivery_key like 'old-processed-%'")).isZero();
        assertThat(maintenance.prune(Duration.ofDays(7), 3)).isZero();
    }
}
