package dev.metakit.inbox.ingest;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Gathers a few more deliveries into a batch before its insert when they arrive too far apart to meet on their own.
 * At a moderate rate each delivery would otherwise be a commit of its own, and a commit costs PostgreSQL several
 * times what a row does ({@code bench/pg-row-cost.sh}: ~200 core-µs a single-row commit, 41 a row in commits of 16). A
 * writer holding fewer than {@link #ROWS} waits up to {@link #WAIT_NANOS} for more, and only while the recent
 * arrivals say at least one more is due within that wait: at a trickle the wait would save nothing, and under load
 * the queue already holds a batch when the writer looks.
 * <p>
 * The rate is sampled by one thread ({@link #sample}) and read by the writers; {@link #arrived} costs a
 * {@link LongAdder} increment on the request's thread.
 */
final class CommitGathering {
    /** a batch this large goes at once: its commit's cost is already shared four ways */
    static final int ROWS = 4;
    /** the longest a delivery waits for company: small beside MetaKit's 5 s and the store's 2 s bound */
    static final long WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** weight of the newest sample in the smoothed rate (samples 10 ms apart: about 50 ms of memory) */
    private static final double SMOOTHING = 0.2;

    private final LongAdder arrivals = new LongAdder();
    private long sampledCount;
    private long sampledAtNanos = System.nanoTime();
    /** deliveries expected within {@link #WAIT_NANOS}, smoothed */
    private volatile double expectedInWait;

    void arrived() {
        arrivals.increment();
    }

    /** Updates the arrival rate; called from one thread only, every few milliseconds. */
    void sample(long nowNanos) {
        long elapsed = nowNanos - sampledAtNanos;
        if (elapsed <= 0) {
            return;
        }
        long count = arrivals.sum();
        double inWait = (double) (count - sampledCount) * WAIT_NANOS / elapsed;
        sampledCount = count;
        sampledAtNanos = nowNanos;
        expectedInWait = expectedInWait + SMOOTHING * (inWait - expectedInWait);
    }

    /** Whether a batch this size would wait for company: it is small and another delivery is due within the wait. */
    boolean worthWaiting(int batchSize) {
        return batchSize < ROWS && expectedInWait >= 1.0;
    }

    /**
     * Adds to {@code batch} what arrives in {@code queue} until it holds {@link #ROWS} deliveries (never more than
     * {@code maxBatch}, the writers' configured cap), the wait is over, or nothing came in the time left; never past
     * half the time to {@code firstDeadlineNanos}, so a delivery already near its deadline is not held for company.
     * Interrupted, it keeps what it gathered (the batch still goes, and every delivery in it is answered) and leaves
     * the thread's interrupt set.
     */
    <T> void gather(BlockingQueue<T> queue, List<T> batch, int maxBatch, long firstDeadlineNanos) {
        int enough = Math.min(ROWS, maxBatch);
        if (batch.size() >= enough || !worthWaiting(batch.size())) {
            return;
        }
        long now = System.nanoTime();
        long until = now + Math.min(WAIT_NANOS, (firstDeadlineNanos - now) / 2);
        while (batch.size() < enough) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                return;
            }
            T next;
            try {
                next = queue.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (next == null) {
                return;
            }
            batch.add(next);
            queue.drainTo(batch, maxBatch - batch.size());
        }
    }
}
