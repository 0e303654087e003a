package dev.metakit.inbox.e2e;

import dev.metakit.inbox.sandbox.Convergence;
import dev.metakit.inbox.sandbox.DeliveryAttempt;
import dev.metakit.inbox.sandbox.DeliveryLog;
import dev.metakit.inbox.sandbox.DeliverySchedule;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import org.junit.jupiter.api.Test;

import dev.metakit.inbox.support.TestDatabase;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The real bundle against the sandbox at its worst: after a quiet period the table is MetaKit's truth. */
class ConvergenceUnderChaosTest {
    @Test
    void underDuplicatesReorderingLossTimeoutsAndApiErrorsEveryAccountConvergesAndNoDeliveryIsLostOrInvented()
            throws Exception {
        SandboxFaults chaos = SandboxFaults.none()
                .withMaxFirstAttemptDelay(Duration.ofMillis(400))
                .withDuplicateProbability(0.15)
                .withLostProbability(0.10)
                .withApi5xxProbability(0.10)
                .withApi429(0.05, 1)
                .withApiSlow(0.05, Duration.ofMillis(300));
        // 100 ms per attempt; while the inbox table is locked (below) acknowledgements come later than that
        DeliverySchedule schedule = DeliverySchedule.contract().scaled(0.05).withRequestTimeout(Duration.ofMillis(100));
        SandboxSettings.Builder settings = SandboxSettings.builder().seed(20261202).accounts(4).faults(chaos)
                .deliverySchedule(schedule).operations(300).operationsPerSecond(100);
        try (SandboxedInbox run = SandboxedInbox.start(settings, Map.of())) {

            run.sandbox.start();
            for (int i = 0; i < 3 && !run.sandbox.trafficDone(); i++) {
                stallInboxCommits(run.sandbox);
            }
            await().atMost(Duration.ofSeconds(20)).until(run.sandbox::trafficDone);
            Convergence.Report report = run.quiesceAndAwaitConvergence(Duration.ofSeconds(30));

            run.assertInboxMatchesDeliveries();
            DeliveryLog log = run.sandbox.deliveries();
            DeliveryLog.Stats stats = log.stats();
            System.out.printf("CHAOS: %d positions compared; deliveries %d (%d lost, %d duplicated, %d given up),"
                            + " attempts %d (%d failed, %d timed out), inbox rows %d, api calls %d (%d errors)%n",
                    report.compared(), stats.deliveries(), stats.lost(), stats.duplicated(), stats.givenUp(),
                    stats.attempts(), stats.failedAttempts(), SandboxedInbox.timedOutAttempts(log.attempts()),
                    SandboxedInbox.inboxKeys().size(), run.sandbox.apiCalls().total(), run.sandbox.apiCalls().errors());
            assertThat(run.sandbox.truth().operations()).isEqualTo(300);
            assertThat(report.compared()).isGreaterThan(50);
            assertThat(stats.lost()).isPositive();
            assertThat(stats.duplicated()).isPositive();
            assertThat(run.sandbox.apiCalls().errors()).isPositive();
            assertThat(SandboxedInbox.timedOutAttempts(log.attempts())).as("client-side timeouts").isPositive();
            assertThat(run.sandbox.truth().closedPositions()).isNotEmpty();
        }
    }

    /**
     * Holds a lock that blocks the inbox's inserts until an attempt made after it was taken has timed out on the
     * sender's side (or the traffic is over), then lets go until an attempt made after that is acknowledged: the
     * deliveries stuck behind the lock are committed (and answered) only after the sender gave up on that attempt, so
     * its retry is a duplicate of a stored row.
     */
    private static void stallInboxCommits(Sandbox sandbox) throws Exception {
        DeliveryLog log = sandbox.deliveries();
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("lock table webhook_inbox in share row exclusive mode");
            long lockedAt = System.nanoTime();
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() ->
                    anyAttemptSince(log, lockedAt, a -> a.error() != null && a.error().contains("Timeout"))
                            || sandbox.trafficDone());
            c.commit();
        }
        long releasedAt = System.nanoTime();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() ->
                anyAttemptSince(log, releasedAt, DeliveryAttempt::succeeded) || sandbox.trafficDone());
    }

    private static boolean anyAttemptSince(DeliveryLog log, long nanos, Predicate<DeliveryAttempt> which) {
        return log.attempts().stream().anyMatch(a -> a.startedNanos() >= nanos && which.test(a));
    }
}
