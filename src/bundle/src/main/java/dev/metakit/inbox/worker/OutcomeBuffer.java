package dev.metakit.inbox.worker;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Records outcomes as they are decided, or keeps those the database cannot take now (it is down), in order, and
 * records them as soon as it answers ({@link #recordKept()}, called by the upkeep). Until its outcome is recorded, an
 * account's work stays in hand: the account is left out of this instance's claims and its leases are renewed, so no
 * row waits for a lease while its instance lives.
 */
final class OutcomeBuffer {
    private static final Logger LOG = LoggerFactory.getLogger(OutcomeBuffer.class);

    private final WorkInHand workInHand;
    private final long retryMillis;
    private final Queue<Outcome> unrecorded = new ConcurrentLinkedQueue<>();
    private volatile boolean recordFailing;

    /** {@code retryMillis}: how often the upkeep tries the kept outcomes again (for the log line). */
    OutcomeBuffer(WorkInHand workInHand, long retryMillis) {
        this.workInHand = workInHand;
        this.retryMillis = retryMillis;
    }

    /** Records an outcome now, or keeps it for when the database answers; its account is held until it is recorded. */
    void settle(Outcome outcome) {
        try {
            outcome.record();
            finished(outcome);
        } catch (SQLException | RuntimeException e) {
            unrecorded.add(outcome);
            if (!recordFailing) {
                LOG.warn("Worker cannot record outcomes now ({}: kept, recorded as soon as the database answers,"
                        + " retried every {} ms): {}", outcome.about(), retryMillis, e.getMessage());
                recordFailing = true;
            }
        }
    }

    /** Records the kept outcomes, in order, until one still cannot be: the next call goes on from there. */
    void recordKept() {
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
