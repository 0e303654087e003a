package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * MetaKit's API down (connection refused), then answering 500, then 429, for a third of the outage each: the inbox
 * keeps acking fast and accumulates, then drains and converges to what the API lists once it is back.
 */
class ApiOutageFaultTest {
    private static final int ACCOUNTS = 10;
    private FakeMetaKit metakit;
    private RunningInbox inbox;

    @BeforeEach
    void start() {
        metakit = FakeMetaKit.onCleanDatabase(ACCOUNTS);
        metakit.latency(5);
        // backoff compressed 5x against the defaults, so attempts are raised to keep a row from failing over an
        // outage the defaults would ride out (1 s base, 8 attempts: about two minutes)
        // (and the worker's test tuning: a 200 ms poll, backoff at most 1 s, no periodic jobs)
        inbox = RunningInbox.againstFakeMetaKit(metakit, Map.of(
                "metakit.worker.backoff-base-millis", "200",
                "metakit.worker.max-attempts", "100"));
    }

    @AfterEach
    void stop() {
        inbox.close();
        metakit.close();
    }

    @Test
    void aFiveSecondApiOutageLeavesAcksFastAndEverythingDrainsAndConvergesAfterwards() throws Exception {
        outage(Duration.ofSeconds(5), Duration.ofSeconds(30));
    }

    @Test
    @Tag("fault-long")
    void aSixtySecondApiOutageLeavesAcksFastAndEverythingDrainsAndConvergesAfterwards() throws Exception {
        outage(Duration.ofSeconds(60), Duration.ofSeconds(60));
    }

    private void outage(Duration length, Duration drainPatience) throws Exception {
        // MetaKit retries what a loaded machine sheds (503 before the commit, counted as shed): every delivery must end
        // acked, and an outage of the API must add no refusal of its own
        double shedBefore = inbox.shedCount();
        SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 4, 50, ACCOUNTS)
                .retryingAsMetaKit().start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 200);

        long third = length.toNanos() / 3;
        long outageStart = System.nanoTime();
        metakit.down();
        // the truth changes during the outage: only reconciles after it can show it
        metakit.openOnePositionEach(ACCOUNTS, "0.30");
        Callable<Boolean> allAcked = () -> load.count(s -> s.startNanos() >= outageStart && !s.acked()
                && !SignedLoad.retryLater(s)) == 0;
        FaultWindow.holdUntil(outageStart + third, "every delivery acked while the API is down", allAcked);
        metakit.outage(500);
        metakit.up();
        FaultWindow.holdUntil(outageStart + 2 * third, "every delivery acked while the API answers 500", allAcked);
        metakit.outage(429);
        FaultWindow.holdUntil(outageStart + length.toNanos(), "every delivery acked while the API answers 429",
                allAcked);
        int healthDuring = inbox.healthStatus();
        // the load stops with the outage: the API calls after its return then serve the backlog alone, and how many
        // there are depends on the claims' shape, not on how fast this machine sends
        List<SignedLoad.Sent> sent = new ArrayList<>(load.stop());
        long outageEnd = System.nanoTime();
        long backlogAtEnd = TestDatabase.scalar(
                "select count(*) from webhook_inbox where processed_at is null and failed_at is null");
        int callsBeforeRecovery = metakit.totalCalls();
        metakit.recover();
        await().atMost(drainPatience).until(() -> TestDatabase.scalar(
                "select count(*) from webhook_inbox where processed_at is null") == 0);
        long drainMillis = Duration.ofNanos(System.nanoTime() - outageEnd).toMillis();
        int callsForBacklog = metakit.totalCalls() - callsBeforeRecovery;

        // then live traffic again for a second, every delivery acked, each served by at most one API call
        SignedLoad live = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 4, 50, ACCOUNTS)
                .retryingAsMetaKit().start();
        FaultWindow.holdFor(Duration.ofSeconds(1), "every delivery acked after the API's return",
                () -> live.count(s -> !s.acked() && !SignedLoad.retryLater(s)) == 0);
        List<SignedLoad.Sent> liveAfterReturn = live.stop();
        sent.addAll(liveAfterReturn);
        await().atMost(drainPatience).until(() -> TestDatabase.scalar(
                "select count(*) from webhook_inbox where processed_at is null") == 0);
        int callsAfterBacklog = metakit.totalCalls() - callsBeforeRecovery - callsForBacklog;

        List<SignedLoad.Sent> before = sent.stream().filter(s -> s.endNanos() < outageStart).toList();
        List<SignedLoad.Sent> during = sent.stream()
                .filter(s -> s.acked() && s.startNanos() >= outageStart && s.endNanos() <= outageEnd).toList();
        Set<String> stored = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox");
        Set<String> ackedButMissing = new HashSet<>(SignedLoad.ackedKeys(sent));
        ackedButMissing.removeAll(stored);
        System.out.printf("FAULT api-outage %ds: sent=%d statuses=%s; acks before p50=%.1f p99=%.1f ms, during "
                        + "(%d) p50=%.1f p99=%.1f max=%.1f ms; backlog at outage end=%d; health during=%d; drained "
                        + "%d ms after the API's return; api calls=%d; max attempts=%d; api calls for the backlog=%d (%.3f "
                        + "per backlog row); %d live deliveries after the backlog, %d api calls for them%n",
                length.toSeconds(), sent.size(), SignedLoad.byStatus(sent),
                SignedLoad.percentileMicros(before, 50) / 1000.0, SignedLoad.percentileMicros(before, 99) / 1000.0,
                during.size(), SignedLoad.percentileMicros(during, 50) / 1000.0,
                SignedLoad.percentileMicros(during, 99) / 1000.0, SignedLoad.percentileMicros(during, 100) / 1000.0,
                backlogAtEnd, healthDuring, drainMillis, metakit.totalCalls(),
                TestDatabase.scalar("select max(attempts) from webhook_inbox"), callsForBacklog,
                callsForBacklog / (double) backlogAtEnd, liveAfterReturn.size(), callsAfterBacklog);

        // every delivery acked, outage or not: within MetaKit's retries, refused only when shed
        SignedLoad.assertAckedWithinMetaKitsRetries(sent, inbox.shedCount() - shedBefore);
        assertThat(healthDuring).as("readiness does not depend on the API being up").isEqualTo(200);
        assertThat(backlogAtEnd).as("the inbox accumulated what came during the outage")
                .isGreaterThanOrEqualTo(during.size() * 9L / 10);
        // the ack path is untouched by the outage: every delivery above was answered 200 within the commit timeout
        // (else 503). Its latency (printed above) depends on the machine's load: bench/worker-bench.sh outage measures it
        assertThat(ackedButMissing).isEmpty();
        // per-account backoff: an account's backlog comes due at one retry time and is served by one reconcile per
        // claim that holds its rows. A claim takes at most 10 rows per account it takes (InboxClaims.claim), so the
        // backlog costs at most one call per 10 rows, plus one per account whose rows a claim boundary splits
        assertThat(callsForBacklog).as("API calls from the API's return until the %d backlog rows were done",
                backlogAtEnd).isLessThanOrEqualTo((int) (backlogAtEnd / 10) + ACCOUNTS);
        assertThat(callsAfterBacklog)
                .as("API calls for %d deliveries after the backlog was done", liveAfterReturn.size())
                .isLessThanOrEqualTo(liveAfterReturn.size());
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
        assertThat(TestDatabase.scalar("select count(*) from positions where status = 'open' and volume = 0.30"))
                .as("every account converged to the API's state").isEqualTo(ACCOUNTS);
        assertThat(TestDatabase.scalar("select count(*) from positions")).isEqualTo(ACCOUNTS);
    }
}
