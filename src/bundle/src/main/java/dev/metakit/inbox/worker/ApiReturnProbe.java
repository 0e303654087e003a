package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.metakit.MetaKitApiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Sees MetaKit answer again after an outage within {@link #EVERY}, instead of when an account's retry or the canary
 * (every {@link WorkerUpkeep#CANARY_EVERY}) next tries: once reconciles of this instance failed on MetaKit itself (a
 * 5xx without Retry-After, a timeout, a refused connection) {@value InboxClaims#CANARY_AFTER_FAILURES} times in a row
 * with none going through between (an outage, not one account's hiccup), it asks MetaKit one question that reads and
 * writes nothing of ours ({@code GET /v1/webhooks}, what the status watch asks) every {@link #EVERY} on a thread of its own.
 * The first answer makes every account backing off on the worker's own delay due at once and rings the doorbell, so
 * the backlog is claimed, one reconcile per account, right away. While MetaKit stays down this costs one GET per
 * {@link #EVERY} and no statement.
 * <p>
 * One wake per failure streak: after a wake, a failure arms the probe again only once a reconcile has gone through.
 * So an account that fails on its own while MetaKit answers (the probe's question succeeds, its reconcile does not)
 * is woken once, then waits out its own backoff, rather than being retried every {@link #EVERY} until its attempts
 * are spent. A failure MetaKit asked to wait for (429 with Retry-After), a refused key or a request MetaKit calls
 * wrong, and a failure of our database do not arm it: none of them ends by MetaKit answering a GET.
 */
final class ApiReturnProbe {
    private static final Logger LOG = LoggerFactory.getLogger(ApiReturnProbe.class);
    /** how often MetaKit is asked whether it answers again, during an outage only */
    static final Duration EVERY = Duration.ofMillis(250);
    private static final int MAX_CAUSES = 20;

    private final BooleanSupplier metaKitAnswers;
    private final Waker wake;
    /* the streak's state, changed under this probe's lock: a failure must not arm it again between a wake and its
       record (that would wake a second time for the same streak); the wake's statement runs outside it */
    private int failuresInARow;
    private volatile boolean armed;
    private boolean wokeSinceWentThrough;
    private ScheduledExecutorService thread;

    /** What the probe does when MetaKit answers: makes the accounts backing off due; returns how many. */
    interface Waker {
        int wake() throws SQLException;
    }

    /**
     * {@code metaKitAnswers}: asks MetaKit the probe's question, true if it answered 2xx (false, or an exception, if
     * not); {@code wake}: what MetaKit's answer sets off.
     */
    ApiReturnProbe(BooleanSupplier metaKitAnswers, Waker wake) {
        this.metaKitAnswers = metaKitAnswers;
        this.wake = wake;
    }

    synchronized void start() {
        if (thread != null) {
            return;
        }
        thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metakit-worker-api-probe");
            t.setDaemon(true);
            return t;
        });
        long every = EVERY.toMillis();
        thread.scheduleWithFixedDelay(this::askIfArmed, every, every, TimeUnit.MILLISECONDS);
    }

    synchronized void stop() {
        if (thread != null) {
            thread.shutdownNow();
            thread = null;
        }
    }

    /**
     * A reconcile failed with {@code cause}: arms the probe once MetaKit itself failed that many times in a row and no
     * wake came since a reconcile last went through.
     */
    synchronized void failed(Throwable cause) {
        if (onMetaKit(cause) && ++failuresInARow >= InboxClaims.CANARY_AFTER_FAILURES && !wokeSinceWentThrough) {
            armed = true;
        }
    }

    /** A reconcile went through: MetaKit answers; the next failure on it arms the probe again. */
    synchronized void wentThrough() {
        failuresInARow = 0;
        armed = false;
        wokeSinceWentThrough = false;
    }

    boolean armed() {
        return armed;
    }

    /** Asks MetaKit if armed; wakes the accounts backing off if it answers. */
    void askIfArmed() {
        if (!armed) {
            return;
        }
        boolean answers;
        try {
            answers = metaKitAnswers.getAsBoolean();
        } catch (RuntimeException e) {
            answers = false;
        }
        if (!answers) {
            return;
        }
        if (!takeTheWake()) {
            return;
        }
        try {
            int woken = wake.wake();
            LOG.info("MetaKit answers again: {} accounts backing off are due now", woken);
        } catch (SQLException | RuntimeException e) {
            giveTheWakeBack();
            // the accounts' own retry times and the canary stand meanwhile; the next round asks again
            LOG.debug("MetaKit answers again, but the accounts backing off cannot be made due yet: {}",
                    e.getMessage());
        }
    }

    /**
     * This streak's one wake, taken under the lock before its statement runs (outside the lock: a reconcile reporting
     * its outcome never waits on the database here); a failure meanwhile no longer arms the probe.
     */
    private synchronized boolean takeTheWake() {
        if (!armed) {
            return false;
        }
        armed = false;
        wokeSinceWentThrough = true;
        return true;
    }

    /** The wake's statement failed: armed again for the next round, unless a reconcile went through meanwhile. */
    private synchronized void giveTheWakeBack() {
        if (wokeSinceWentThrough) {
            wokeSinceWentThrough = false;
            armed = true;
        }
    }

    /** Whether {@code cause} is MetaKit's own failure that ends when it answers again. */
    static boolean onMetaKit(Throwable cause) {
        int depth = 0; // a chain of causes can loop back on itself: a bounded walk
        for (Throwable t = cause; t != null && depth < MAX_CAUSES; t = t.getCause(), depth++) {
            if (t instanceof SQLException) {
                return false; // our database, whatever it wraps
            }
            if (t instanceof MetaKitApiException api) {
                return api.status() >= 500 && api.retryAfter().isEmpty();
            }
            if (t instanceof IOException) {
                return true; // no answer: refused, reset, timed out
            }
        }
        return false;
    }
}
