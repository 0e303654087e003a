package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestDatabase.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A stop that waits for a reconcile in flight for longer than the liveness bound (dead-after, 5 s by default), as a
 * stop against a slow MetaKit does. The reconcile is held, not raced: the MetaKit test double keeps its answer until
 * the test releases it, and the test releases it only once the stop has lasted past dead-after on the database's clock.
 * All along, the rows stay this boot's (its heartbeat beats until they are given back): no other instance may claim
 * them, and nothing is said at WARN.
 */
class StopPastLivenessTest {
    private static final Duration DEAD_AFTER = InboxClaims.DEFAULT_DEAD_AFTER;

    /** A start of PostgreSQL counts as every boot's beat: only on a server up longer is a takeover possible at all. */
    @BeforeAll
    static void databaseUpLongerThanDeadAfter() {
        TestDatabase.upLongerThan(DEAD_AFTER);
    }

    @Test
    void aStopWaitingPastTheLivenessBoundKeepsItsRowsAndProcessesThemOnceWithNothingAtWarn() throws Exception {
        try (FakeMetaKit metakit = FakeMetaKit.onCleanDatabase(1);
             LogCapture log = LogCapture.atOrAbove(Level.WARN)) {
            // camel.main.shutdown-timeout 30 s instead of 10: this stop waits past dead-after on purpose, and a loaded
            // machine must not reach Camel's timeout, which forces the routes (the test below takes that way)
            Held held = aReconcileHeldInFlight(metakit, "30");
            RunningInbox inbox = held.inbox();
            String token = held.claimToken();

            CompletableFuture<Void> stop = CompletableFuture.runAsync(inbox::close);
            theStopLastsPastTheLivenessBound(inbox);

            assertThat(text("select claim_token::text from webhook_inbox")).as("the row is still this boot's")
                    .isEqualTo(token);
            assertThat(scalar("select count(*) from inbox_instances where boot_token = '" + token + "'"
                    + " and heartbeat_at > now() - interval '" + DEAD_AFTER.toMillis() + " milliseconds'"))
                    .as("the stopping boot still beats").isEqualTo(1);
            assertThat(anotherInstanceClaims()).as("rows another instance could take over").isEmpty();

            metakit.release();
            stop.get(60, TimeUnit.SECONDS);

            assertThat(TestDatabase.rows("select attempts, processed_at is not null as processed from webhook_inbox"))
                    .as("processed once, by the stopping boot")
                    .containsExactly(Map.of("attempts", 1, "processed", true));
            assertThat(metakit.calls("positions")).as("reconciles of the account").isEqualTo(1);
            assertThat(scalar("select count(*) from inbox_instances")).as("the boot signed off").isZero();
            assertThat(log.lines()).as("lines at WARN or above").isEmpty();
        }
    }

    @Test
    void aStopThatGivesUpWaitingGivesTheRowsBackForTheNextBootToProcessOnce() throws Exception {
        try (FakeMetaKit metakit = FakeMetaKit.onCleanDatabase(1);
             LogCapture log = LogCapture.atOrAbove(Level.WARN)) {
            // camel.main.shutdown-timeout 6 s instead of 10: a stop that gives up waiting past dead-after, sooner
            Held held = aReconcileHeldInFlight(metakit, "6");

            held.inbox().close(); // Camel forces the routes after 6 s; the worker gives back what it had not finished

            assertThat(scalar("select count(*) from webhook_inbox where claim_token is null and attempts = 0"
                    + " and processed_at is null")).as("given back with its attempt, not taken over").isEqualTo(1);
            assertThat(scalar("select count(*) from inbox_instances where boot_token = '" + held.claimToken() + "'"))
                    .isZero();
            metakit.release(); // the reconcile cut short ends after the stop: it writes nothing

            RunningInbox next = RunningInbox.againstFakeMetaKit(metakit, Map.of());
            try {
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> scalar("select count(*) from webhook_inbox where processed_at is not null") == 1);
            } finally {
                next.close();
            }
            assertThat(scalar("select attempts from webhook_inbox")).as("processed once, by the next boot")
                    .isEqualTo(1);
            assertThat(log.lines()).as("the bundle's lines at WARN or above (Camel warns of its forced stop)")
                    .filteredOn(line -> line.contains(" dev.metakit.")).isEmpty();
        }
    }

    private record Held(RunningInbox inbox, String claimToken) {
    }

    /**
     * The bundle against {@code metakit}, {@code camel.main.shutdown-timeout} {@code shutdownSeconds}, with a delivery
     * for account 1 stored and claimed and its reconcile waiting for MetaKit's held answer; the claim's token.
     */
    private static Held aReconcileHeldInFlight(FakeMetaKit metakit, String shutdownSeconds) throws Exception {
        metakit.hold((client, account) -> true);
        RunningInbox inbox = RunningInbox.againstFakeMetaKit(metakit,
                Map.of("camel.main.shutdown-timeout", shutdownSeconds));
        assertThat(inbox.postSigned(TestEvents.event("position.opened", 1, 100), "position.opened").statusCode())
                .isBetween(200, 299);
        await().atMost(Duration.ofSeconds(30)).until(() -> metakit.calls("positions") == 1);
        return new Held(inbox, text("select claim_token::text from webhook_inbox where claim_token is not null"));
    }

    /** Waits until the stop has begun and then lasted longer than dead-after and a heartbeat, on the database's clock. */
    private static void theStopLastsPastTheLivenessBound(RunningInbox inbox) {
        await().atMost(Duration.ofSeconds(10)).until(() -> inbox.camelContext().isStopping());
        String begun = text("select now()::text");
        await().atMost(DEAD_AFTER.multipliedBy(4)).until(() -> scalar("select count(*) where now() > '" + begun
                + "'::timestamptz + interval '" + (DEAD_AFTER.toMillis() + 1000) + " milliseconds'") == 1);
    }

    private static List<?> anotherInstanceClaims() throws Exception {
        return new InboxClaims(TestDatabase.dataSource())
                .claim(Claimant.newBoot("another-instance"), 10, Duration.ofMinutes(2));
    }
}
