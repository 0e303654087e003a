package dev.metakit.inbox.worker;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Records outcomes as they are decided, or keeps those the database cannot take now (it is down), in order, and
 * records them as soon as it answers ({@link #recordKept()}, called by the upkeep). Until its outcome is recorded, an
 * account's work stays in hand: the account is left out of this instance's claims and its leases are renewed, so no
 * row waits for a lease while its instance lives.
 * <p>
 * Outcomes are written side by side, but never while the leases are renewed ({@link #exclusively}): a row settled
 * between the renewal's look at the work in hand and its statement would look taken over by another instance. Once
 * {@link #close closed} (the worker stops and gives its unfinished rows back) no outcome is written any more: a
 * reconcile that ends after the stop finds its rows given back, which is the stop's doing, not another instance's.
 */
final class OutcomeBuffer {
    private static final Logger LOG = LoggerFactory.getLogger(OutcomeBuffer.class);

    private final WorkInHand workInHand;
    private final long retryMillis;
    private final Queue<Outcome> unrecorded = new ConcurrentLinkedQueue<>();
    /** read: an outcome being written; write: the renewal of the leases, or the stop */
    private final ReadWriteLock writing = new ReentrantReadWriteLock();
    private volatile boolean recordFailing;
    private volatile boolean closed;

    /** {@code retryMillis}: how often the upkeep tries the kept outcomes again (for the log line). */
    OutcomeBuffer(WorkInHand workInHand, long retryMillis) {
        this.workInHand = workInHand;
        this.retryMillis = retryMillis;
    }

    /** Records an outcome now, or keeps it for when the database answers; its account is held until it is recorded. */
    void settle(Outcome outcome) {
        writing.readLock().lock();
        try {
            if (closed) {
                LOG.info("Worker stopped before its work on {} ended: its rows were given back and are claimed again",
                        outcome.about());
                return;
            }
            outcome.record();
            finished(outcome);
        } catch (SQLException | RuntimeException e) {
            unrecorded.add(outcome);
            if (!recordFailing) {
                LOG.warn("Worker cannot record outcomes now ({}: kept, recorded as soon as the database answers,"
                        + " retried every {} ms): {}", outcome.about(), retryMillis, e.getMessage());
                recordFailing = true;
            }
        } finally {
            writing.readLock().unlock();
        }
    }

    /** Records the kept outcomes, in order, until one still cannot be: the next call goes on from there. */
    void recordKept() {
        writing.readLock().lock();
        try {
            if (!closed) {
                recordKeptInOrder();
            }
        } finally {
            writing.readLock().unlock();
        }
    }

    private void recordKeptInOrder() {
        for (Outcome o : unrecorded) {
            try {
                o.record();
            } catch (SQLException | RuntimeException e) {
                return; // still down: the next round tries again, in the same order
            }
            unrecorded.remove(o);
            finished(o);
        }
        if (recordFailing && unrecorded.isEmpty()) {
            LOG.info("Worker recorded the outcomes it kept while the database was unavailable");
            recordFailing = false;
        }
    }

    /** Runs {@code task} while no outcome is being written. */
    void exclusively(Runnable task) {
        writing.writeLock().lock();
        try {
            task.run();
        } finally {
            writing.writeLock().unlock();
        }
    }

    /**
     * Writes no outcome from now on, and runs {@code lastly} (giving the unfinished work back) before any outcome
     * decided after this call could have been written.
     */
    void close(Runnable lastly) {
        exclusively(() -> {
            closed = true;
            lastly.run();
        });
    }

    /** Whether the worker stopped writing outcomes. */
    boolean closed() {
        return closed;
    }

    /** Drops the kept outcomes of an account whose work was given up: its rows are claimed again. */
    void forget(long accountId) {
        unrecorded.removeIf(o -> o.accountId() != null && o.accountId() == accountId);
    }

    /** Outcomes waiting for the database. */
    int size() {
        return unrecorded.size();
    }

    private void finished(Outcome outcome) {
        if (outcome.accountId() != null) {
            workInHand.release(outcome.accountId());
        }
    }
}
