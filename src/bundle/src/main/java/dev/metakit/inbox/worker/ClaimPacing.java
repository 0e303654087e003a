package dev.metakit.inbox.worker;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How long the worker's doorbell waits before its next claim. Normally the coalescing wait
 * ({@code metakit.worker.coalesce-millis}), so that a burst of one account's events folds into one reconcile. During
 * an API outage every delivery rings for an account that is backing off, and claim after claim finds nothing while
 * each costs the database a statement: so once a reconcile of this instance has failed, each claim that comes back
 * empty doubles the wait, up to the poll's period ({@code metakit.worker.poll-interval-millis}, the pace at which the
 * worker looks for work anyway). A claim that takes rows, a reconcile that goes through, or an account the canary
 * made due ends the slowdown at once, a wait already begun included ({@link #awaitNextClaim}): MetaKit's return
 * noticed in the middle of a grown wait is claimed for after the coalescing wait, not after the rest of the poll's
 * period.
 */
final class ClaimPacing {
    /** doublings at most (a wait is capped by the poll's period long before) */
    private static final int MAX_DOUBLINGS = 20;

    private final AtomicInteger emptyClaims = new AtomicInteger();
    private volatile boolean failing;
    /** signalled when the slowdown ends, so that a wait under way is cut to the coalescing wait */
    private final ReentrantLock waits = new ReentrantLock();
    private final Condition slowdownEnded = waits.newCondition();

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
        endSlowdown();
    }

    /**
     * An account was made due now (the canary, MetaKit's return): the next claim takes it without the slowdown's
     * wait, and a wait under way ends once the coalescing wait has passed.
     */
    void dueNow() {
        endSlowdown();
    }

    private void endSlowdown() {
        waits.lock();
        try {
            emptyClaims.set(0);
            slowdownEnded.signalAll();
        } finally {
            waits.unlock();
        }
    }

    /**
     * Waits {@link #delayMillis} from now, in the caller's thread; if the slowdown ends meanwhile, only until the
     * coalescing wait has passed since the call. Returns early, with the thread's interrupt set, if interrupted.
     */
    void awaitNextClaim(long coalesceMillis, long pollMillis) {
        long start = System.nanoTime();
        waits.lock();
        try {
            long left;
            // the delay is asked again after each wake: an ended slowdown has made it the coalescing wait
            while ((left = start + TimeUnit.MILLISECONDS.toNanos(delayMillis(coalesceMillis, pollMillis))
                    - System.nanoTime()) > 0) {
                slowdownEnded.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // a stop: the drain that follows claims nothing once stopped
        } finally {
            waits.unlock();
        }
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
