package dev.metakit.inbox.worker;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class ClaimPacingTest {
    private static final long COALESCE = 50;
    private static final long POLL = 1000;

    private final ClaimPacing pacing = new ClaimPacing();

    @Test
    void emptyClaimsWithoutAFailureKeepTheCoalescingWait() {
        for (int i = 0; i < 10; i++) {
            pacing.claimed(false);
        }
        assertThat(pacing.delayMillis(COALESCE, POLL)).as("an idle worker: its deliveries are claimed at once")
                .isEqualTo(COALESCE);
    }

    @Test
    void afterAFailureEachEmptyClaimDoublesTheWaitUpToThePollsPeriod() {
        pacing.failed();
        assertThat(pacing.delayMillis(COALESCE, POLL)).isEqualTo(COALESCE);
        long[] waits = new long[6];
        for (int i = 0; i < waits.length; i++) {
            pacing.claimed(false);
            waits[i] = pacing.delayMillis(COALESCE, POLL);
        }
        assertThat(waits).containsExactly(100, 200, 400, 800, 1000, 1000);
    }

    @Test
    void aClaimThatTakesRowsAReconcileThatGoesThroughOrTheCanaryEndTheSlowdown() {
        pacing.failed();
        pacing.claimed(false);
        pacing.claimed(false);
        pacing.claimed(true);
        assertThat(pacing.delayMillis(COALESCE, POLL)).as("rows claimed").isEqualTo(COALESCE);

        pacing.claimed(false);
        pacing.dueNow();
        assertThat(pacing.delayMillis(COALESCE, POLL)).as("an account made due by the canary").isEqualTo(COALESCE);
        pacing.claimed(false);
        assertThat(pacing.delayMillis(COALESCE, POLL)).as("still failing: the next empty claim slows again")
                .isEqualTo(100);

        pacing.wentThrough();
        assertThat(pacing.delayMillis(COALESCE, POLL)).as("MetaKit answers again").isEqualTo(COALESCE);
        pacing.claimed(false);
        assertThat(pacing.delayMillis(COALESCE, POLL)).as("no failure since: empty claims are an idle worker's")
                .isEqualTo(COALESCE);
    }

    @Test
    void aWaitIsNeverShorterThanTheCoalescingWaitNorLongerThanThePollsPeriodOnceGrown() {
        pacing.failed();
        for (int i = 0; i < 100; i++) {
            pacing.claimed(false);
        }
        assertThat(pacing.delayMillis(COALESCE, POLL)).isEqualTo(POLL);
        assertThat(pacing.delayMillis(0, POLL)).as("no coalescing wait configured").isEqualTo(POLL);
        assertThat(pacing.delayMillis(2000, POLL)).as("a coalescing wait above the poll's period stands")
                .isEqualTo(2000);
    }

    @Test
    void aWaitUnderWayEndsWhenAnAccountIsMadeDueOrAReconcileGoesThrough() {
        long poll = TimeUnit.MINUTES.toMillis(10); // a wait no test run outlasts: only the wake can end it
        for (Runnable wake : new Runnable[] {pacing::dueNow, pacing::wentThrough}) {
            pacing.failed();
            for (int i = 0; i < 30; i++) {
                pacing.claimed(false);
            }
            assertThat(pacing.delayMillis(COALESCE, poll)).isEqualTo(poll);
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> pacing.awaitNextClaim(COALESCE, poll));
            // grown to the poll's period: still waiting well past the coalescing wait
            await().during(Duration.ofMillis(4 * COALESCE)).atMost(Duration.ofSeconds(5))
                    .until(() -> !waiting.isDone());
            wake.run();
            await().atMost(Duration.ofSeconds(30)).until(waiting::isDone);
            assertThat(waiting).isCompleted();
        }
    }
}
