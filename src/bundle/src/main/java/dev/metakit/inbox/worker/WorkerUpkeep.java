package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * This boot's upkeep, on threads of its own: the heartbeat in {@code inbox_instances} every {@code heartbeatMillis},
 * on a thread and a connection of its own so that no other task or statement delays it (when it stops, the boot's
 * claims are free for the others after {@code deadAfterMillis}), and the renewal of the
 * leases of the work in hand every third of a lease, so a drain longer than the lease (a slow API, a large claim) is
 * not taken over by another instance. Between renewals it records the outcomes the database could not take.
 */
final class WorkerUpkeep {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerUpkeep.class);
    private static final Duration ADVANCE_EVERY = Duration.ofMinutes(1);
    /** how often, during an outage, one account backing off is retried for all (InboxClaims.dueCanary) */
    static final Duration CANARY_EVERY = Duration.ofSeconds(5);
    /** rows a catch-up settled, marked processed per statement */
    static final int MARK_BATCH = 5_000;
    /** how long a round of the upkeep marks settled rows at most (the renewals, every third of a lease, wait) */
    static final Duration MARK_FOR = Duration.ofSeconds(2);

    private final Predicate<InboxRow> usable;
    private final InstanceLiveness liveness;
    private final InboxClaims claims;
    private final WorkInHand workInHand;
    private final OutcomeBuffer outcomes;
    private final WorkerCounters counters;
    private final long heartbeatMillis;
    private final long deadAfterMillis;
    private final Duration lease;

    private ScheduledExecutorService heartbeat;
    private ScheduledExecutorService threads;
    private volatile long nextRenewal;
    private volatile boolean heartbeatFailing;
    private volatile boolean renewalFailing;
    /** the first at start, then once a minute: the days a backlog emptied leave the claims' look within a minute */
    private volatile long nextAdvance;
    private volatile boolean advanceFailing;
    private volatile long nextCanary;
    /** told when the canary made an account due */
    private volatile Runnable onCanary = () -> { };
    /** a catch-up committed: rows it settled wait to be marked processed (also looked for once a minute) */
    private volatile boolean settledToMark = true;
    private long markedInRun;
    private volatile boolean markFailing;

    /** {@code usable}: whether a settled row may be marked processed unread (else a claim takes it, to fail it) */
    WorkerUpkeep(InstanceLiveness liveness, InboxClaims claims, WorkInHand workInHand, OutcomeBuffer outcomes,
                 WorkerCounters counters, long heartbeatMillis, long deadAfterMillis, Duration lease,
                 Predicate<InboxRow> usable) {
        this.usable = usable;
        this.liveness = liveness;
        this.claims = claims;
        this.workInHand = workInHand;
        this.outcomes = outcomes;
        this.counters = counters;
        this.heartbeatMillis = heartbeatMillis;
        this.deadAfterMillis = deadAfterMillis;
        this.lease = lease;
    }

    /**
     * Beats once, then every {@code heartbeatMillis}, and starts the renewals; once (a second call does nothing). The
     * first beat takes back the earlier boots' claims, and goes before this boot's first claim, so the claim's rows
     * belong to a live boot.
     */
    synchronized void start() {
        if (threads != null) {
            return;
        }
        Claimant self = liveness.self();
        LOG.info("Worker instance {} boot {}: heartbeat every {} ms, its claims free for others {} ms after its last",
                self.instanceId(), self.bootToken(), heartbeatMillis, deadAfterMillis);
        beat();
        // the heartbeat on a thread of its own (and its own connection: InstanceLiveness), never behind another task
        heartbeat = Executors.newSingleThreadScheduledExecutor(
                // a hint only (JVMs on Linux mostly ignore it): the beat is what keeps this boot's claims
                r -> daemon(r, "metakit-worker-heartbeat", Thread.MAX_PRIORITY));
        heartbeat.scheduleWithFixedDelay(this::beat, heartbeatMillis, heartbeatMillis, TimeUnit.MILLISECONDS);
        threads = Executors.newSingleThreadScheduledExecutor(
                r -> daemon(r, "metakit-worker-upkeep", Thread.NORM_PRIORITY));
        nextRenewal = System.nanoTime() + renewalPeriod().toNanos();
        nextAdvance = System.nanoTime();
        nextCanary = System.nanoTime() + CANARY_EVERY.toNanos();
        long every = Math.min(heartbeatMillis, renewalPeriod().toMillis());
        threads.scheduleWithFixedDelay(this::recordAndRenew, every, every, TimeUnit.MILLISECONDS);
    }

    private static Thread daemon(Runnable r, String name, int priority) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.setPriority(priority);
        return t;
    }

    synchronized boolean started() {
        return threads != null;
    }

    /** Stops beating and renewing, and waits for a beat under way: it would put this boot back after it left. */
    synchronized void stop() {
        if (threads == null) {
            return;
        }
        heartbeat.shutdownNow();
        threads.shutdownNow();
        try {
            heartbeat.awaitTermination(2 * heartbeatMillis, TimeUnit.MILLISECONDS);
            threads.awaitTermination(2 * heartbeatMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void beat() {
        try {
            int earlier = liveness.beat();
            if (earlier > 0) {
                LOG.info("Worker instance {} took back the claims of {} earlier boot(s) of it",
                        liveness.self().instanceId(), earlier);
            }
            if (heartbeatFailing) {
                LOG.info("Worker heartbeat works again");
                heartbeatFailing = false;
            }
        } catch (SQLException | RuntimeException e) {
            if (!heartbeatFailing) {
                LOG.warn("Worker heartbeat failed (retrying every {} ms; after {} ms other instances may take this"
                        + " one's claims over): {}", heartbeatMillis, deadAfterMillis, e.getMessage());
                heartbeatFailing = true;
            }
        }
    }

    /**
     * Extends the leases of the work in hand that is not near its limit. No outcome is written meanwhile, so a row
     * this renewal misses was taken over by another instance, not settled by this one.
     */
    void renewLeases() {
        outcomes.exclusively(this::renewLeasesOfWorkInHand);
    }

    private void renewLeasesOfWorkInHand() {
        if (outcomes.closed()) {
            return; // the stop gave the work in hand back
        }
        List<InboxKey> keys = workInHand.keysToRenew(System.nanoTime());
        if (keys.isEmpty()) {
            return;
        }
        try {
            int renewed = claims.renew(liveness.self(), keys, lease);
            counters.fencedIfShort(liveness.self(), keys, renewed, "lease renewal", claims);
            if (renewalFailing) {
                LOG.info("Worker renews its leases again");
                renewalFailing = false;
            }
        } catch (SQLException | RuntimeException e) {
            // the next renewal tries again; the heartbeat keeps the claims meanwhile
            if (!renewalFailing) {
                LOG.warn("Worker cannot renew the lease of {} inbox rows (retrying): {}", keys.size(), e.getMessage());
                renewalFailing = true;
            }
        }
    }

    private void recordAndRenew() {
        outcomes.recordKept();
        if (System.nanoTime() - nextRenewal >= 0) {
            nextRenewal = System.nanoTime() + renewalPeriod().toNanos();
            renewLeases();
        }
        if (System.nanoTime() - nextAdvance >= 0) {
            nextAdvance = System.nanoTime() + ADVANCE_EVERY.toNanos();
            advancePendingSince();
            settledToMark = true; // another instance's catch-ups, or this one's before a restart
        }
        if (settledToMark) {
            markSettled();
        }
        if (System.nanoTime() - nextCanary >= 0) {
            nextCanary = System.nanoTime() + CANARY_EVERY.toNanos();
            dueCanary();
        }
    }

    /** {@code listener} runs each time the canary made an account due (the worker claims it without delay). */
    void onCanary(Runnable listener) {
        this.onCanary = listener;
    }

    /** One account backing off retried now for all of them, so the API's return is seen within CANARY_EVERY. */
    void dueCanary() {
        try {
            Long account = claims.dueCanary(CANARY_EVERY);
            if (account != null) {
                onCanary.run();
                LOG.debug("Worker retries account {} now for every account backing off: does MetaKit answer again?",
                        account);
            }
        } catch (SQLException | RuntimeException e) {
            // the accounts' own retry times stand meanwhile; the heartbeat and the claims say what is wrong
            LOG.debug("Worker cannot pick an account to retry for all: {}", e.getMessage());
        }
    }

    /** A catch-up committed: the rows it settled are marked processed from the next round on. */
    void settled() {
        settledToMark = true;
    }

    /**
     * Marks processed the rows catch-ups settled, {@value #MARK_BATCH} a statement, for at most {@link #MARK_FOR} a
     * round (the renewals share this thread), then again the next round until none is left; one line when done.
     */
    void markSettled() {
        long until = System.nanoTime() + MARK_FOR.toNanos();
        try {
            int marked;
            do {
                InboxClaims.Marked batch = claims.markSettled(MARK_BATCH, usable);
                marked = batch.total();
                markedInRun += batch.processed();
                counters.addProcessed(batch.processed());
            } while (marked == MARK_BATCH && System.nanoTime() - until < 0);
            if (marked < MARK_BATCH) {
                settledToMark = false;
                if (markedInRun > 0) {
                    LOG.info("Worker marked {} inbox rows processed that the catch-up of their account settled",
                            markedInRun);
                }
                markedInRun = 0;
            }
            markFailing = false;
        } catch (SQLException | RuntimeException e) {
            // the rows stay settled meanwhile (no claim takes them); the next round tries again
            if (!markFailing) {
                LOG.warn("Worker cannot mark the rows a catch-up settled processed yet (retrying): {}", e.getMessage());
                markFailing = true;
            }
        }
    }

    /** Moves the start of the claims' look past the days whose rows are all worked (InboxClaims). */
    void advancePendingSince() {
        try {
            claims.advancePendingSince();
            if (advanceFailing) {
                LOG.info("Worker moves the start of its claims' look again");
                advanceFailing = false;
            }
        } catch (SQLException | RuntimeException e) {
            // claims look from where it last was meanwhile: more days than needed, none fewer
            if (!advanceFailing) {
                LOG.warn("Worker cannot move the start of its claims' look past worked days (retrying every {} s): {}",
                        ADVANCE_EVERY.toSeconds(), e.getMessage());
                advanceFailing = true;
            }
        }
    }

    private Duration renewalPeriod() {
        return Duration.ofMillis(Math.max(100, lease.toMillis() / 3));
    }
}
