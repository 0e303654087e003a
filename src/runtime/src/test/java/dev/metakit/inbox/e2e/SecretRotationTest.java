package dev.metakit.inbox.e2e;

import dev.metakit.inbox.sandbox.Delivery;
import dev.metakit.inbox.sandbox.DeliveryAttempt;
import dev.metakit.inbox.sandbox.DeliveryLog;
import dev.metakit.inbox.sandbox.DeliverySchedule;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.support.RunningInbox;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The sandbox rotates its secret mid-traffic; the rotation hook moves the consumer's secrets along. */
class SecretRotationTest {
    @Test
    void aRotationInTheMiddleOfTrafficLosesNoDeliveryBeforeDuringOrAfterItsWindow() throws Exception {
        // rotate after 40 events; the old secret is co-signed for 1 s, the traffic goes on for about 2 s more
        SandboxFaults faults = SandboxFaults.none().withMaxFirstAttemptDelay(Duration.ofMillis(300))
                .withRotation(40, Duration.ofSeconds(1));
        SandboxSettings.Builder settings = SandboxSettings.builder().seed(99).accounts(3).faults(faults)
                .deliverySchedule(DeliverySchedule.contract().scaled(0.05).withRequestTimeout(Duration.ofSeconds(5)))
                .operations(150).operationsPerSecond(50);
        try (SandboxedInbox run = SandboxedInbox.start(settings, Map.of())) {

            run.sandbox.start();
            await().atMost(Duration.ofSeconds(20)).until(run.sandbox::trafficDone);
            run.quiesceAndAwaitConvergence(Duration.ofSeconds(20));

            assertThat(run.sandbox.previousSecret()).isEqualTo(RunningInbox.SECRET);
            assertThat(run.sandbox.currentSecret()).isNotEqualTo(RunningInbox.SECRET);
            DeliveryLog log = run.sandbox.deliveries();
            assertThat(log.deliveries()).anyMatch(d -> d.v1s().size() == 2);
            // signed with the new secret only: accepted only because the hook gave the consumer that secret
            assertThat(log.deliveries().stream().filter(d -> d.v1s().size() == 1).skip(40)).isNotEmpty();
            assertThat(log.stats().givenUp()).isZero();
            assertThat(log.deliveries()).allMatch(Delivery::acknowledged);
            // neither secret refused: every answer a 2xx (an attempt a loaded machine did not answer within the
            // request timeout is sent again, as MetaKit does, and its delivery is acknowledged: above)
            assertThat(log.attempts().stream().filter(a -> !a.timedOut())).allMatch(DeliveryAttempt::succeeded);
            run.assertInboxMatchesDeliveries();
        }
    }
}
