package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A MetaKit API that takes 4 s per call is never on the ack path: every delivery is acked without waiting for it. */
class SlowApiFaultTest {
    private static final int ACCOUNTS = 10;
    private static final Duration ROUND = Duration.ofMillis(1500);
    private static final int API_MILLIS = 4000;
    private FakeMetaKit metakit;
    private RunningInbox inbox;

    @BeforeEach
    void start() {
        metakit = FakeMetaKit.onCleanDatabase(ACCOUNTS);
        inbox = RunningInbox.start(Map.of(
                "metakit.api.url", metakit.url(),
                "metakit.api.key", FakeMetaKit.API_KEY,
                "metakit.worker.poll-interval-millis", "200",
                "metakit.reconcile.interval", "PT1H",
                "metakit.status.interval", "PT1H"));
    }

    @AfterEach
    void stop() {
        // the API first: its 4 s calls in flight end at once instead of holding the bundle's shutdown
        metakit.close();
        inbox.close();
    }

    @Test
    void ackLatencyWithAFourSecondApiIsTheSameAsWithAnInstantOne() throws Exception {
        // MetaKit retries what a loaded machine sheds (503 before the commit, counted as shed): every delivery must end
        // acked, and the slow API must add no refusal of its own
        double shedBefore = inbox.shedCount();
        SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 4, 50, ACCOUNTS)
                .retryingAsMetaKit().start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 200);
        // alternating rounds, so a neighbour's build on these 2 cores lands on both sides alike
        List<long[]> fastWindows = new ArrayList<>();
        List<long[]> slowWindows = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            boolean slow = round % 2 == 1;
            metakit.latency(slow ? API_MILLIS : 0);
            long from = System.nanoTime();
            FaultWindow.holdFor(ROUND, "every delivery of the round answered 200 (or shed, to be retried)",
                    () -> load.count(s -> s.startNanos() >= from && s.status() != 200 && !SignedLoad.retryLater(s))
                            == 0);
            (slow ? slowWindows : fastWindows).add(new long[]{from, System.nanoTime()});
        }
        int maxInFlight = metakit.maxInFlight();
        List<SignedLoad.Sent> sent = load.stop();
        List<SignedLoad.Sent> fast = within(sent, fastWindows);
        List<SignedLoad.Sent> slow = within(sent, slowWindows);
        long fastP99 = SignedLoad.percentileMicros(fast, 99);
        long slowP99 = SignedLoad.percentileMicros(slow, 99);
        System.out.printf("FAULT slow-api: api 0 ms: %d acks p50=%.1f p99=%.1f ms | api 4000 ms: %d acks p50=%.1f "
                        + "p99=%.1f ms | slow/fast p99=%.2f; api calls in flight at most %d%n",
                fast.size(), SignedLoad.percentileMicros(fast, 50) / 1000.0, fastP99 / 1000.0,
                slow.size(), SignedLoad.percentileMicros(slow, 50) / 1000.0, slowP99 / 1000.0,
                (double) slowP99 / Math.max(1, fastP99), maxInFlight);

        // every delivery acked, slow API or not: within MetaKit's retries, refused only when shed
        SignedLoad.assertAckedWithinMetaKitsRetries(sent, inbox.shedCount() - shedBefore);
        assertThat(maxInFlight).as("the slow API was really being called").isGreaterThan(0);
        // an ack that waited for an API call would take at least the call's 4 s: none does, as the bundle's ack meter
        // times them from arrival (a loaded machine adds seconds at the client: the p99s above are for reading, their
        // ratio the machine's load)
        assertThat(slow).as("acks while the API takes 4 s").isNotEmpty();
        assertThat(inbox.slowestAnswer(200).toMillis()).as("the slowest 2xx, from arrival in the bundle, ms")
                .isLessThan(API_MILLIS);
        metakit.latency(0);
    }

    private static List<SignedLoad.Sent> within(List<SignedLoad.Sent> sent, List<long[]> windows) {
        return sent.stream().filter(s -> windows.stream()
                .anyMatch(w -> s.startNanos() >= w[0] && s.endNanos() <= w[1])).toList();
    }
}
