package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.Collection;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What this instance's worker wrote to inbox rows, counted for the metrics ({@code metakit.inbox.rows.*},
 * {@code metakit.inbox.dead.lettered}): from construction, before the worker starts, so a meter bound early reads 0.
 */
final class WorkerCounters {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerCounters.class);

    private final AtomicLong processed = new AtomicLong();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong fenced = new AtomicLong();
    /** One counter per reason, all made here: the map itself never changes. */
    private final Map<PoisonReason, AtomicLong> deadLettered = new EnumMap<>(PoisonReason.class);

    WorkerCounters() {
        for (PoisonReason reason : PoisonReason.values()) {
            deadLettered.put(reason, new AtomicLong());
        }
    }

    void addProcessed(int rows) { processed.addAndGet(rows); }
    void addRetried(int rows) { retried.addAndGet(rows); }
    void addFailed(int rows) { failed.addAndGet(rows); }
    void addDeadLettered(PoisonReason reason, int rows) { deadLettered.get(reason).addAndGet(rows); }

    /**
     * A write of {@code self} on the claimed rows {@code keys} took {@code written}. Of the others, those another boot
     * holds now were taken over while this one was not beating: counted as fenced and said at WARN. The rest were
     * settled or given back meanwhile (an earlier write of this boot whose answer was lost, as in a failover; or an
     * instance that took them over and finished them): said at INFO, as nothing is wrong now.
     */
    void fencedIfShort(Claimant self, Collection<InboxKey> keys, int written, String about, InboxClaims claims) {
        int missed = keys.size() - written;
        if (missed <= 0) {
            return;
        }
        int takenOver;
        try {
            takenOver = claims.heldByOthers(self, keys);
        } catch (SQLException | RuntimeException e) {
            fenced.addAndGet(missed);
            LOG.warn("Worker boot {} no longer holds {} of {} inbox rows it claimed ({}); who holds them could not be"
                    + " read ({}); nothing written for them", self.bootToken(), missed, keys.size(), about,
                    e.getMessage());
            return;
        }
        if (takenOver > 0) {
            fenced.addAndGet(takenOver);
            LOG.warn("Worker boot {} no longer holds {} of {} inbox rows it claimed ({}): another instance took them"
                    + " over while this one was not beating; nothing written for them", self.bootToken(), takenOver,
                    keys.size(), about);
        }
        if (missed > takenOver) {
            LOG.info("Worker boot {} found {} of {} inbox rows it claimed ({}) already settled or given back (an"
                    + " earlier write whose answer was lost, or an instance that took them over and finished them);"
                    + " nothing written for them", self.bootToken(), missed - takenOver, keys.size(), about);
        }
    }

    long processed() { return processed.get(); }
    long retried() { return retried.get(); }
    long failed() { return failed.get(); }
    long fenced() { return fenced.get(); }
    long deadLettered(PoisonReason reason) { return deadLettered.get(reason).get(); }
}
