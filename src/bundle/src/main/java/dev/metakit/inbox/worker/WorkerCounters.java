package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
     * A write of {@code self} on {@code expected} claimed rows took {@code written}: the others had been taken over
     * by another instance while this one was not beating. They are counted as fenced, and said in one line.
     */
    void fencedIfShort(Claimant self, int expected, int written, String about) {
        int lost = expected - written;
        if (lost > 0) {
            fenced.addAndGet(lost);
            LOG.warn("Worker boot {} no longer holds {} of {} inbox rows it claimed ({}): another instance took them"
                    + " over while this one was not beating; nothing written for them", self.bootToken(), lost,
                    expected, about);
        }
    }

    long processed() { return processed.get(); }
    long retried() { return retried.get(); }
    long failed() { return failed.get(); }
    long fenced() { return fenced.get(); }
    long deadLettered(PoisonReason reason) { return deadLettered.get(reason).get(); }
}
