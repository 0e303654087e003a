package dev.metakit.inbox.worker;

import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * What the worker decided about claimed rows (processed, failed, backing off), as the database writes that record
 * it, in order. Kept by the worker while the database cannot take it, and recorded once it can: a step that went
 * through is not written again.
 */
final class Outcome {
    /** One write; returns nothing, counts what it wrote itself. */
    @FunctionalInterface
    interface Step {
        void write() throws SQLException;
    }

    private final Long accountId;
    private final String about;
    private final Deque<Step> steps;

    Outcome(Long accountId, String about, List<Step> steps) {
        this.accountId = accountId;
        this.about = about;
        this.steps = new ArrayDeque<>(steps);
    }

    /** Writes the steps not yet written; on a failure, the ones left stay for the next call. */
    synchronized void record() throws SQLException {
        while (!steps.isEmpty()) {
            steps.peek().write();
            steps.poll();
        }
    }

    /** The account whose work this settles (it stays out of this instance's claims until then), or null. */
    Long accountId() {
        return accountId;
    }

    String about() {
        return about;
    }
}
