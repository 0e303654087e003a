package dev.metakit.inbox.feed;

import com.fasterxml.jackson.databind.ObjectWriter;
import org.apache.camel.AsyncProducer;
import org.apache.camel.Endpoint;
import org.apache.camel.support.service.ServiceHelper;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * What runs while the in-process publisher publishes ({@link ChangePublisher}): made by its first poll, given back by
 * its stop. Kept apart so the publisher holds the feed's rules and this what they run on.
 */
record FeedParts(ExecutorService pool, ExecutorService senders, ScheduledExecutorService retries,
                 AsyncProducer producer, OutletBatch outlet, FeedBackoff backoff, FeedWakeups wakeups,
                 FeedOwnership ownership) {

    /**
     * Starts the outlet's producer, {@code concurrency} threads running rounds, {@code concurrency} threads handing
     * accounts' changes to the outlet (so that many accounts send at once) and one retry timer (daemons: a stuck send
     * never holds the JVM up); the wakeups are started by the caller once these are in place.
     */
    static FeedParts start(Endpoint outlet, ObjectWriter json, int concurrency, FeedBackoff backoff,
                           FeedWakeups wakeups, FeedOwnership ownership) {
        AsyncProducer producer;
        try {
            producer = outlet.createAsyncProducer();
        } catch (Exception e) {
            throw new IllegalStateException("the feed's outlet " + outlet.getEndpointUri() + " has no producer", e);
        }
        ServiceHelper.startService(producer);
        ExecutorService pool = Executors.newFixedThreadPool(concurrency, daemon("metakit-feed-publisher"));
        ExecutorService senders = Executors.newFixedThreadPool(concurrency, daemon("metakit-feed-sender"));
        ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(daemon("metakit-feed-retry"));
        return new FeedParts(pool, senders, retries, producer, new OutletBatch(outlet, producer, json, senders),
                backoff, wakeups, ownership);
    }

    /**
     * Stops listening, retrying and taking turns; sends in flight finish, up to a few seconds. Returns whether every
     * turn ended (false: a send may still be under way).
     */
    boolean stop() throws InterruptedException {
        wakeups.close();
        retries.shutdownNow();
        pool.shutdown();
        boolean idle = pool.awaitTermination(5, TimeUnit.SECONDS);
        if (!idle) {
            pool.shutdownNow();
        }
        // a round ends only once its step's sends are answered: the senders are idle unless a round was cut off
        senders.shutdown();
        idle &= senders.awaitTermination(idle ? 1 : 0, TimeUnit.SECONDS);
        if (!idle) {
            senders.shutdownNow();
        }
        ServiceHelper.stopService(producer);
        return idle;
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
