package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.OwnPostgresInbox;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every session of the bundle ended by PostgreSQL (pg_terminate_backend: what an administrator, a pooler restart or a
 * failover does), twice, under ingest, at the default settings: the process lives, nothing acked is lost, and the
 * backlog drains by itself, no row waiting for the lease ({@link FaultChecks#RECOVERY_BOUND}): work whose outcome could
 * not be written on a dead connection is recorded on a new one.
 */
class ConnectionsTerminatedFaultTest {
    private static final int ACCOUNTS = 10;

    @RegisterExtension
    final OwnPostgresInbox bundle = new OwnPostgresInbox(ACCOUNTS);

    @Test
    void everySessionTerminatedTwiceUnderIngestLosesNothingAckedAndTheBacklogDrainsByItself()
            throws Exception {
        SignedLoad load = new SignedLoad(bundle.inbox().webhookUri(), RunningInbox.SECRET, 8, 50, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 200);

        int first = bundle.postgres().terminateClientSessions();
        long acked = load.count(SignedLoad.Sent::acked);
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= acked + 100);
        int second = bundle.postgres().terminateClientSessions();
        long secondAt = System.nanoTime();
        long ackedAfterSecond = load.count(SignedLoad.Sent::acked);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> load.count(SignedLoad.Sent::acked) >= ackedAfterSecond + 100);
        List<SignedLoad.Sent> sent = load.stop();
        long stoppedAt = System.nanoTime();

        Set<String> ackedKeys = SignedLoad.ackedKeys(sent);
        Duration drained = bundle.untilProcessed(ackedKeys, secondAt, FaultChecks.RECOVERY_BOUND.multipliedBy(2));
        Set<String> ackedButMissing = bundle.missing(ackedKeys);
        System.out.printf("FAULT connections-terminated x2: sessions ended %d then %d; sent=%d statuses=%s; every acked"
                        + " row (%d) processed %d ms after the second termination (%d ms after the load stopped);"
                        + " acked-but-missing=%d%n", first, second, sent.size(), SignedLoad.byStatus(sent),
                ackedKeys.size(), drained.toMillis(), Duration.ofNanos(System.nanoTime() - stoppedAt).toMillis(),
                ackedButMissing.size());

        assertThat(first).as("sessions ended the first time").isPositive();
        assertThat(second).as("sessions ended the second time").isPositive();
        assertThat(bundle.inbox().camelContext().isStarted()).as("the bundle runs on").isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> bundle.inbox().healthStatus() == 200);
        assertThat(ackedButMissing).as("acked but missing").isEmpty();
        assertThat(drained).as("backlog drained after the second termination").isLessThan(FaultChecks.RECOVERY_BOUND);
    }
}
