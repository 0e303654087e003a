package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

import static dev.metakit.inbox.support.InboxRows.row;
import static dev.metakit.inbox.support.InboxRows.rows;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Replay and retention in the real bundle: the worker re-runs replayed rows, the scheduled route prunes. */
class ReplayAndRetentionTest {
    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();
    private final FakeMetaKit metakit = fixture.metakit();
    private RunningInbox inbox;

    @Test
    void aReplayedAccountIsReconciledAgainByTheWorker() throws Exception {
        metakit.open(2, 20, "0.10", "0", "0", Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60));
        inbox = fixture.start(Map.of());
        inbox.postSigned(TestEvents.event("position.opened", 2, 20), "position.opened");
        await().atMost(Duration.ofSeconds(15)).until(() ->
                scalar("select count(*) from webhook_inbox where processed_at is not null") == 1);
        await().atMost(Duration.ofSeconds(15)).until(() -> metakit.calls("positions") >= 1);
        int before = metakit.calls("positions");

        InboxMaintenance ops = inbox.camelContext().getRegistry().lookupByNameAndType("inboxMaintenance",
                InboxMaintenance.class);
        assertThat(ops.replayAccount(2)).isEqualTo(1);
        await().atMost(Duration.ofSeconds(15)).until(() -> metakit.calls("positions") > before
                && scalar("select count(*) from webhook_inbox where processed_at is not null") == 1);
        assertThat(scalar("select count(*) from positions where account_id = 2 and status = 'open'")).isEqualTo(1);
    }

    @Test
    void changesFoundByAReplayedDeliveryAreWrittenWithSourceReplay() throws Exception {
        Instant opened = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);
        metakit.open(2, 20, "0.10", "0", "0", opened);
        inbox = fixture.start(Map.of());
        inbox.postSigned(TestEvents.event("position.opened", 2, 20), "position.opened");
        await().atMost(Duration.ofSeconds(15)).until(() ->
                scalar("select count(*) from webhook_inbox where processed_at is not null") == 1);
        assertThat(scalar("select count(*) from position_changes where account_id = 2 and ticket = 20")).isEqualTo(1);
        // a second position whose delivery MetaKit never made: only the replayed delivery's reconcile finds it
        metakit.open(2, 21, "0.20", "0", "0", opened.plusSeconds(10));

        InboxMaintenance ops = inbox.camelContext().getRegistry().lookupByNameAndType("inboxMaintenance",
                InboxMaintenance.class);
        assertThat(ops.replayAccount(2)).isEqualTo(1);
        await().atMost(Duration.ofSeconds(15)).until(() ->
                scalar("select count(*) from position_changes where account_id = 2 and ticket = 21") == 1);

        assertThat(TestDatabase.text("select source from position_changes where ticket = 20")).isEqualTo("event");
        assertThat(TestDatabase.text("select source from position_changes where ticket = 21")).isEqualTo("replay");
    }

    @Test
    void theRetentionRoutePrunesOldProcessedRowsAndKeepsFailedOnes() throws Exception {
        rows("old-", 5, 2, 60, "processed");
        row("old-failed", 2, 60, "failed");
        row("recent", 2, 1, "processed");
        inbox = fixture.startWith(Map.of("metakit.retention", "P1D", "metakit.retention.interval", "1s",
                "metakit.retention.first-delay", "1s", "metakit.retention.batch-size", "2",
                "camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "retention")));
        await().atMost(Duration.ofSeconds(15)).until(() -> scalar("select count(*) from webhook_inbox") == 2);
        assertThat(scalar("select count(*) from webhook_inbox where delivery_key in ('old-failed', 'recent')"))
                .isEqualTo(2);
    }

    @Test
    void aRetentionShorterThanADayStopsStartupWithOneLineNamingIt() {
        assertThatThrownBy(() -> RunningInbox.start(Map.of("metakit.retention", "PT12H",
                "camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "retention"))))
                .satisfies(e -> {
                    Throwable t = e;
                    while (t != null && !(t instanceof ConfigurationException)) {
                        t = t.getCause();
                    }
                    assertThat(t).isNotNull();
                    assertThat(t.getMessage()).startsWith("METAKIT_RETENTION must be at least P1D").contains("'PT12H'");
                });
    }
}
