package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestDatabase.text;
import static dev.metakit.inbox.worker.ClaimedRows.claimAll;
import static dev.metakit.inbox.worker.ClaimedRows.trade;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The boot's upkeep on the test database, on its own threads: it beats, renews the leases of the work in hand, and
 * records the outcomes kept while the database could not take them. A heartbeat of 200 ms and a lease of 1 s (renewed
 * every 333 ms) so each happens several times within a test; the defaults are 1 s and 120 s.
 */
class WorkerUpkeepTest {
    private static final Duration LEASE = Duration.ofSeconds(1);

    private InstanceLiveness liveness;
    private final WorkInHand workInHand = new WorkInHand(LEASE);
    private final OutcomeBuffer outcomes = new OutcomeBuffer(workInHand, 200);
    private final WorkerCounters counters = new WorkerCounters();
    private WorkerUpkeep upkeep;

    @BeforeEach
    void start() throws Exception {
        TestDatabase.truncateAll();
        liveness = ClaimedRows.beatingBoot("upkeep-test");
        upkeep = new WorkerUpkeep(liveness, ClaimedRows.CLAIMS, workInHand, outcomes, counters, 200, 5000, LEASE,
                row -> true);
    }

    @AfterEach
    void stop() {
        upkeep.stop();
    }

    @Test
    void itBeatsFromItsStartUntilItStops() {
        upkeep.start();
        String first = heartbeat();

        await().atMost(Duration.ofSeconds(5)).until(() -> !heartbeat().equals(first));

        upkeep.stop();
        String last = heartbeat();
        await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(2)).until(() -> heartbeat().equals(last));
    }

    @Test
    void itMovesTheStartOfTheClaimsLookPastTheWorkedRowsAtItsStart() {
        TestDatabase.exec("insert into webhook_inbox (delivery_key, event, account_id, body, signed_at, processed_at)"
                + " values ('worked', 'position.opened', 1, '{}', now() - interval '3 days', now())");

        upkeep.start();

        await().atMost(Duration.ofSeconds(5)).until(() -> TestDatabase.instant(
                "select coalesce(max(since), '-infinity') from inbox_pending_since").isAfter(
                TestDatabase.clock().minus(Duration.ofHours(3))));
    }

    @Test
    void theLeasesOfTheWorkInHandAreRenewedBeforeTheyRunOut() throws Exception {
        trade("a1", 1, 10);
        workInHand.hold(new AccountWork(1, claimAll(liveness.self(), LEASE), List.of()), System.nanoTime());

        upkeep.start();

        // half a lease past the first one: still leased, so renewed
        await().atMost(Duration.ofSeconds(5)).until(() -> scalar("select count(*) from webhook_inbox"
                + " where claimed_until > now() and received_at < now() - interval '1500 milliseconds'") == 1);
        assertThat(counters.fenced()).isZero();
    }

    @Test
    void rowsSettledWhileTheLeasesAreRenewedAreNotTakenForATakeover() throws Exception {
        trade("a1", 1, 10);
        List<InboxRow> rows = claimAll(liveness.self(), LEASE);
        List<InboxKey> keys = rows.stream().map(InboxRow::inboxKey).toList();
        workInHand.hold(new AccountWork(1, rows, List.of()), System.nanoTime());
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        // an outcome whose row is marked processed, held between its write and the work's release
        Thread settling = new Thread(() -> outcomes.settle(new Outcome(1L, "account 1", List.of(() -> {
            ClaimedRows.CLAIMS.markProcessed(liveness.self(), keys);
            written.countDown();
            try {
                finish.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }))));
        settling.start();
        written.await();

        Thread renewal = new Thread(upkeep::renewLeases);
        renewal.start();
        await().atMost(Duration.ofSeconds(5)).until(() -> renewal.getState() == Thread.State.WAITING
                || renewal.getState() == Thread.State.TERMINATED);
        finish.countDown();
        settling.join();
        renewal.join();

        assertThat(counters.fenced()).as("rows counted as taken over by another instance").isZero();
    }

    @Test
    void outcomesKeptWhileTheDatabaseWasDownAreRecordedOnceItAnswers() {
        AtomicBoolean down = new AtomicBoolean(true);
        AtomicBoolean recorded = new AtomicBoolean();
        workInHand.hold(new AccountWork(7, List.of(), List.of()), System.nanoTime());
        outcomes.settle(new Outcome(7L, "account 7", List.of(() -> {
            if (down.get()) {
                throw new SQLException("connection refused");
            }
            recorded.set(true);
        })));
        upkeep.start();
        assertThat(outcomes.size()).isEqualTo(1);

        down.set(false);

        await().atMost(Duration.ofSeconds(5)).until(recorded::get);
        await().atMost(Duration.ofSeconds(5)).until(() -> workInHand.accounts().isEmpty());
        assertThat(outcomes.size()).isZero();
    }

    private String heartbeat() {
        return text("select heartbeat_at::text from inbox_instances where boot_token = '"
                + liveness.self().bootToken() + "'");
    }
}
