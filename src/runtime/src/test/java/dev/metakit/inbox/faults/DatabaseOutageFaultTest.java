package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.OwnPostgresInbox;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * PostgreSQL stopped, or killed (SIGKILL of the postmaster: crash recovery), under steady ingest, with the worker
 * draining against a MetaKit double, the bundle at its default settings: never a 2xx while the database is down, every
 * 503 within MetaKit's wait, and on its return, without a restart, 2xx again and every acked row processed by the
 * bundle itself: no row waits for the 120 s lease ({@link FaultChecks#RECOVERY_BOUND}; how many seconds it takes is
 * the Recovery benchmark's). Outcomes the worker decided while the database was down are kept and recorded on its
 * return.
 */
class DatabaseOutageFaultTest {
    private static final int ACCOUNTS = 10;

    @RegisterExtension
    final OwnPostgresInbox bundle = new OwnPostgresInbox(ACCOUNTS);

    @Test
    void anEightSecondStopIsAnswered503AndEveryAckedRowIsProcessedOnItsReturn() throws Exception {
        outage("stop", Duration.ofSeconds(8), false);
    }

    @Test
    void aKilledPostmasterLosesNoAckedRowAndEveryOneIsProcessedOnItsReturn() throws Exception {
        outage("sigkill", Duration.ofSeconds(8), true);
    }

    @Test
    @Tag("fault-long")
    void aSixtySecondStopIsAnswered503AndEveryAckedRowIsProcessedOnItsReturn() throws Exception {
        outage("stop", Duration.ofSeconds(60), false);
    }

    private void outage(String kind, Duration down, boolean kill) throws Exception {
        SignedLoad load = new SignedLoad(bundle.inbox().webhookUri(), RunningInbox.SECRET, 8, 50, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 200);

        if (kill) {
            bundle.postgres().kill();
        } else {
            bundle.postgres().stop();
        }
        // down from here: until the stop returns, a commit that made it before the server went away is a true ack
        long downAt = System.nanoTime();
        await().atMost(down).until(() -> bundle.inbox().healthStatus() == 503);
        long healthDownMillis = Duration.ofNanos(System.nanoTime() - downAt).toMillis();
        FaultWindow.holdUntil(downAt + down.toNanos(), "health 503 while the database is down",
                () -> bundle.inbox().healthStatus() == 503);

        long upBegin = System.nanoTime();
        bundle.postgres().start();
        long upAt = System.nanoTime();
        Set<String> ackedBeforeReturn = SignedLoad.ackedKeys(load.results());
        Duration processedAfterReturn = bundle.untilProcessed(ackedBeforeReturn, upAt,
                FaultChecks.RECOVERY_BOUND.multipliedBy(2));

        await().atMost(FaultChecks.RECOVERY_BOUND)
                .until(() -> load.count(s -> s.acked() && s.startNanos() > upAt) >= 200);
        long firstAckAfterUp = load.results().stream().filter(s -> s.acked() && s.startNanos() > upAt)
                .mapToLong(SignedLoad.Sent::endNanos).min().orElseThrow();
        // readiness comes back with the database, no restart
        await().atMost(Duration.ofSeconds(10)).until(() -> bundle.inbox().healthStatus() == 200);
        List<SignedLoad.Sent> sent = load.stop();
        long slowest503 = bundle.inbox().slowestAnswer(503).toMillis();
        Set<String> acked = SignedLoad.ackedKeys(sent);
        Duration drained = bundle.untilProcessed(acked, System.nanoTime(), Duration.ofSeconds(30));

        List<SignedLoad.Sent> whileDown = sent.stream()
                .filter(s -> s.startNanos() >= downAt && s.endNanos() <= upBegin).toList();
        Set<String> ackedButMissing = bundle.missing(acked);
        System.out.printf("FAULT database-%s %ds: sent=%d statuses=%s while-down=%d %s p50=%d ms max=%d ms at the"
                        + " client, the slowest 503 %d ms from arrival in the bundle; health 503"
                        + " after %d ms; postgres start took %d ms; first 2xx %d ms after it was up; rows acked before"
                        + " its return (%d) all processed %d ms after it; backlog drained %d ms after the load stopped;"
                        + " acked-but-missing=%d%n",
                kind, down.toSeconds(), sent.size(), SignedLoad.byStatus(sent), whileDown.size(),
                SignedLoad.byStatus(whileDown), SignedLoad.percentileMicros(whileDown, 50) / 1000,
                SignedLoad.percentileMicros(whileDown, 100) / 1000, slowest503, healthDownMillis,
                Duration.ofNanos(upAt - upBegin).toMillis(), Duration.ofNanos(firstAckAfterUp - upAt).toMillis(),
                ackedBeforeReturn.size(), processedAfterReturn.toMillis(), drained.toMillis(), ackedButMissing.size());

        assertThat(whileDown).isNotEmpty().allSatisfy(s -> assertThat(s.status()).as("answer while down")
                .isEqualTo(503));
        assertThat(slowest503).as("the slowest 503, from arrival to answer in the bundle, ms")
                .isLessThan(FaultChecks.METAKIT_ANSWER_WAIT.toMillis());
        assertThat(sent).as("every request answered").noneMatch(s -> s.status() == -1);
        assertThat(Duration.ofNanos(firstAckAfterUp - upAt)).as("first 2xx after the database is back")
                .isLessThan(FaultChecks.RECOVERY_BOUND);
        assertThat(ackedButMissing).as("acked but missing").isEmpty();
        assertThat(processedAfterReturn).as("every row acked before the database's return processed after it")
                .isLessThan(FaultChecks.RECOVERY_BOUND);
    }
}
