package dev.metakit.inbox.e2e;

import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.sandbox.Convergence;
import dev.metakit.inbox.sandbox.DeliverySchedule;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Nothing reaches the consumer: only the periodic reconcile can make the table right, and it does. */
class LostDeliveryRepairTest {
    @Test
    void whenEveryDeliveryIsLostThePeriodicReconcileAloneRepairsOpenAndClosedPositions() throws Exception {
        SandboxSettings.Builder settings = SandboxSettings.builder().seed(7).accounts(2).operationsPerSecond(0)
                .faults(SandboxFaults.none().withLostProbability(1.0))
                .deliverySchedule(DeliverySchedule.contract().scaled(0.05).withRequestTimeout(Duration.ofSeconds(5)));
        try (SandboxedInbox run = SandboxedInbox.start(settings, Map.of("metakit.reconcile.interval", "2s"))) {

            run.sandbox.runOperations(60);
            Convergence.Report report = run.quiesceAndAwaitConvergence(Duration.ofSeconds(20));

            assertThat(run.sandbox.deliveries().sentKeys()).isEmpty();
            assertThat(SandboxedInbox.inboxKeys()).isEmpty();
            // positions opened and closed unseen exist only in the deals: the periodic scan found them
            assertThat(run.sandbox.truth().closedPositions()).isNotEmpty();
            assertThat(report.compared()).isEqualTo(run.sandbox.truth().closedPositions().size()
                    + run.sandbox.truth().openPositions().values().stream().mapToInt(Map::size).sum());
            assertThat(TestDatabase.scalar("select count(*) from reconcile_runs where trigger = 'periodic'"))
                    .isPositive();
        }
    }
}
