package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.PrimaryAndStandby;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The failover of a highly available PostgreSQL ({@link PrimaryAndStandby}: a primary and a synchronous streaming
 * standby), the bundle given both hosts in its database URL ({@code targetServerType=primary}), every other setting at
 * its default, under steady signed traffic: the primary SIGKILLed, the standby promoted 3 s later (a managed service's
 * failover takes seconds to tens of seconds), then the old primary back in recovery. Never a 2xx while there is no
 * primary, 2xx again within seconds of the promotion, every acked row on the new primary and processed, and the old
 * primary, back first in the URL's list, taking no writes.
 */
class FailoverFaultIT {
    private static final Duration NO_PRIMARY = Duration.ofSeconds(3);
    private static final int ACCOUNTS = 10;

    @TempDir
    Path root;
    private PrimaryAndStandby servers;
    private FakeMetaKit metakit;
    private RunningInbox inbox;

    @BeforeEach
    void start() throws Exception {
        servers = PrimaryAndStandby.start(root);
        metakit = FakeMetaKit.withOnePositionEach(ACCOUNTS);
        inbox = RunningInbox.onServer(servers.multiHostUrl(), metakit);
    }

    @AfterEach
    void stop() throws Exception {
        try (PrimaryAndStandby s = servers; FakeMetaKit m = metakit) {
            if (inbox != null) {
                inbox.close();
            }
        }
    }

    @Test
    void aKilledPrimaryWhoseStandbyIsPromotedCostsSecondsOf503AndNoAckedDelivery() throws Exception {
        SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 4, 25, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 100);

        servers.primary().kill();
        long killedAt = System.nanoTime();
        // no server takes a write: a 2xx for a delivery sent now would be a lie
        FaultWindow.holdFor(NO_PRIMARY, "no 2xx for a delivery sent while there is no primary",
                () -> load.count(s -> s.acked() && s.startNanos() > killedAt) == 0);
        long promoteBegin = System.nanoTime();
        servers.promoteStandby();
        long promotedAt = System.nanoTime();

        await().atMost(Duration.ofSeconds(15)).until(() -> load.count(s -> s.acked() && s.startNanos() > promotedAt) >= 50);
        servers.restartOldPrimaryAsStandby();
        long oldBackAt = System.nanoTime();
        assertThat(PrimaryAndStandby.inRecovery(servers.primary())).as("the old primary is back in recovery").isTrue();
        // the old primary is first in the URL again: the bundle must keep writing to the new one, not get stuck
        await().atMost(Duration.ofSeconds(15)).until(() -> load.count(s -> s.acked() && s.startNanos() > oldBackAt) >= 50);
        List<SignedLoad.Sent> sent = load.stop();
        boolean oldStillInRecovery = PrimaryAndStandby.inRecovery(servers.primary());

        Set<String> acked = SignedLoad.ackedKeys(sent);
        Set<String> missing = FaultChecks.missing(servers.standby().dataSource(), acked);
        Duration drained = FaultChecks.untilProcessed(servers.standby().dataSource(), acked, Duration.ofSeconds(30));
        List<SignedLoad.Sent> inGap = sent.stream()
                .filter(s -> s.startNanos() >= killedAt && s.endNanos() <= promoteBegin).toList();
        long firstAckAfterPromotion = sent.stream().filter(s -> s.acked() && s.startNanos() > killedAt)
                .mapToLong(SignedLoad.Sent::endNanos).min().orElseThrow();
        long ackedAfterOldBack = sent.stream().filter(s -> s.acked() && s.startNanos() > oldBackAt).count();
        System.out.printf("FAULT failover (primary SIGKILLed, standby promoted %d ms later): sent=%d statuses=%s;"
                        + " in the gap=%d %s max=%d ms; pg_promote took %d ms; first 2xx %d ms after the promotion;"
                        + " acked=%d all on the new primary (missing=%d), processed %d ms after the load stopped;"
                        + " 2xx after the old primary's return=%d, it stayed in recovery=%s%n",
                Duration.ofNanos(promoteBegin - killedAt).toMillis(), sent.size(), SignedLoad.byStatus(sent),
                inGap.size(), SignedLoad.byStatus(inGap), SignedLoad.percentileMicros(inGap, 100) / 1000,
                Duration.ofNanos(promotedAt - promoteBegin).toMillis(),
                Duration.ofNanos(firstAckAfterPromotion - promotedAt).toMillis(), acked.size(), missing.size(),
                drained.toMillis(), ackedAfterOldBack, oldStillInRecovery);

        assertThat(inGap).as("deliveries answered while there was no primary").isNotEmpty()
                .allSatisfy(s -> assertThat(s.status()).as("answer without a primary").isEqualTo(503));
        assertThat(Duration.ofNanos(firstAckAfterPromotion - promotedAt)).as("first 2xx after the promotion")
                .isLessThan(FaultChecks.RECOVERY_BOUND);
        assertThat(missing).as("acked but not on the new primary").isEmpty();
        assertThat(oldStillInRecovery).as("the old primary stayed read-only").isTrue();
    }
}
