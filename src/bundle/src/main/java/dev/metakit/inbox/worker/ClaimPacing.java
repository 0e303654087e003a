package dev.metakit.inbox.worker;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * How long the worker's doorbell waits before its next claim. Normally the coalescing wait
 * ({@code metakit.worker.coalesce-millis}), so that a burst of one account's events folds into one reconcile. During
 * an API outage every delivery rings for an account that is backing off, and claim after claim finds nothing while
 * each costs the database a statement: so once a reconcile of this instance has failed, each claim that comes back
 * empty doubles the wait, up to the poll's period ({@code metakit.worker.poll-interval-millis}, the pace at which the
 * worker looks for work anyway). A claim that takes rows, a reconcile that goes through, or an account the canary
 * made due ends the slowdown at once.
 */
final class ClaimPacing {
    /** doublings at most (a wait is capped by the poll's period long before) */
    private static final int MAX_DOUBLINGS = 20;

    private final AtomicInteger emptyClaims = new AtomicInteger();
    private volatile boolean failing;

    /** A claim took rows ({@code true}) or found none. */
    void claimed(boolean tookRows) {
        if (tookRows) {
            emptyClaims.set(0);
        } else if (failing) {
            emptyClaims.incrementAndGet();
        }
    }

    /** A reconcile failed: its account backs off, and its deliveries ring for nothing until its retry. */
    void failed() {
        failing = true;
    }

    /** A reconcile went through: MetaKit answers, and the accounts waiting on it are due. */
    void wentThrough() {
        failing = false;
        emptyClaims.set(0);
    }

    /** An account was made due now (the canary): the next claim takes it without the slowdown's wait. */
    void dueNow() {
        emptyClaims.set(0);
    }

    /** The wait before the next claim, from the coalescing wait up to the poll's period. */
    long delayMillis(long coalesceMillis, long pollMillis) {
        int empty = emptyClaims.get();
        if (empty == 0) {
            return coalesceMillis;
        }
        long grown = Math.max(coalesceMillis, 1) << Math.min(empty, MAX_DOUBLINGS);
        return Math.max(coalesceMillis, Math.min(grown, pollMillis));
    }
}
