package dev.metakit.inbox.ingest;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When a small batch waits for company: only while the arrivals say another delivery is due within the wait, never
 * once it holds enough rows, never for longer than the wait or half the time to its first deadline. The rate is fed
 * by hand ({@code sample} with the test's own clock) and the queue records how long it was asked to wait, so nothing
 * here depends on the machine's speed.
 */
class CommitGatheringTest {
    private static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long FAR_DEADLINE = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    /** the samples' clock, ahead of the machine's: the rate counts arrivals over its steps */
    private long sampledAt = System.nanoTime();

    @Test
    void aTrickleNeverWaits() {
        CommitGathering gathering = withArrivalsPerSecond(100);

        assertThat(gathering.worthWaiting(1)).isFalse();
    }

    @Test
    void atAModerateRateASmallBatchTakesWhatArrivesUntilItHoldsEnoughRows() throws Exception {
        CommitGathering gathering = withArrivalsPerSecond(1600);
        RecordingQueue queue = new RecordingQueue(List.of("b", "c", "d", "e", "f"));
        List<String> batch = new ArrayList<>(List.of("a"));

        gathering.gather(queue, batch, 256, FAR_DEADLINE);

        assertThat(batch).containsExactly("a", "b", "c", "d");
        assertThat(queue.waits).hasSize(CommitGathering.ROWS - 1)
                .allSatisfy(wait -> assertThat(wait).isPositive().isLessThanOrEqualTo(CommitGathering.WAIT_NANOS));
        assertThat(queue.arriving).containsExactly("e", "f");
    }

    @Test
    void aBatchThatAlreadyHoldsEnoughRowsGoesAtOnce() throws Exception {
        CommitGathering gathering = withArrivalsPerSecond(20_000);
        RecordingQueue queue = new RecordingQueue(List.of("e"));
        List<String> batch = new ArrayList<>(List.of("a", "b", "c", "d"));

        gathering.gather(queue, batch, 256, FAR_DEADLINE);

        assertThat(batch).hasSize(CommitGathering.ROWS);
        assertThat(queue.waits).isEmpty();
    }

    @Test
    void aBatchNeverOutgrowsTheWritersCap() {
        CommitGathering gathering = withArrivalsPerSecond(1600);
        RecordingQueue queue = new RecordingQueue(List.of("b", "c", "d"));
        List<String> batch = new ArrayList<>(List.of("a"));

        gathering.gather(queue, batch, 2, FAR_DEADLINE);

        assertThat(batch).containsExactly("a", "b");
    }

    @Test
    void whenNothingMoreArrivesTheBatchGoesAfterOneWait() throws Exception {
        CommitGathering gathering = withArrivalsPerSecond(1600);
        RecordingQueue queue = new RecordingQueue(List.of());
        List<String> batch = new ArrayList<>(List.of("a"));

        gathering.gather(queue, batch, 256, FAR_DEADLINE);

        assertThat(batch).containsExactly("a");
        assertThat(queue.waits).hasSize(1);
    }

    @Test
    void aDeliveryNearItsDeadlineWaitsAtMostHalfTheTimeLeft() throws Exception {
        CommitGathering gathering = withArrivalsPerSecond(1600);
        RecordingQueue queue = new RecordingQueue(List.of());
        long deadline = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(800);

        gathering.gather(queue, new ArrayList<>(List.of("a")), 256, deadline);

        assertThat(queue.waits).allSatisfy(wait -> assertThat(wait).isLessThanOrEqualTo(
                TimeUnit.MICROSECONDS.toNanos(400)));
    }

    @Test
    void interruptedItKeepsWhatItGatheredAndLeavesTheInterruptSet() {
        CommitGathering gathering = withArrivalsPerSecond(1600);
        RecordingQueue queue = new RecordingQueue(List.of("b")) {
            @Override
            public String poll(long timeout, TimeUnit unit) throws InterruptedException {
                if (!waits.isEmpty()) {
                    throw new InterruptedException("the writer is stopped");
                }
                return super.poll(timeout, unit);
            }
        };
        List<String> batch = new ArrayList<>(List.of("a"));

        try {
            gathering.gather(queue, batch, 256, FAR_DEADLINE);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(batch).containsExactly("a", "b");
    }

    @Test
    void theRateFollowsTheArrivalsDown() {
        CommitGathering gathering = withArrivalsPerSecond(1600);
        assertThat(gathering.worthWaiting(1)).isTrue();

        for (int i = 1; i <= 50; i++) {
            gathering.sample(sampledAt += SAMPLE_NANOS);
        }

        assertThat(gathering.worthWaiting(1)).isFalse();
    }

    /** a gathering that has seen this rate for half a second, sampled every 10 ms */
    private CommitGathering withArrivalsPerSecond(int perSecond) {
        CommitGathering gathering = new CommitGathering();
        long perSample = perSecond * SAMPLE_NANOS / TimeUnit.SECONDS.toNanos(1);
        for (int i = 1; i <= 50; i++) {
            for (long a = 0; a < perSample; a++) {
                gathering.arrived();
            }
            gathering.sample(sampledAt += SAMPLE_NANOS);
        }
        return gathering;
    }

    /** a queue that one delivery reaches at each timed poll (answered at once), recording the wait it was given */
    private static class RecordingQueue extends LinkedBlockingQueue<String> {
        final List<Long> waits = new ArrayList<>();
        final List<String> arriving;

        RecordingQueue(List<String> arriving) {
            this.arriving = new ArrayList<>(arriving);
        }

        @Override
        public String poll(long timeout, TimeUnit unit) throws InterruptedException {
            waits.add(unit.toNanos(timeout));
            if (!arriving.isEmpty()) {
                offer(arriving.remove(0));
            }
            return poll();
        }
    }
}
