package dev.metakit.inbox.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectWriter;
import org.apache.camel.AsyncProducer;
import org.apache.camel.Endpoint;
import org.apache.camel.Exchange;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * Sends one account's batch of changes to the outlet route, asynchronously and in seq order: each send is handed to
 * the route before the previous one is confirmed, so an outlet that confirms later (Kafka's producer: acks from the
 * broker, in order per partition, without duplicates or reordering on its retries when idempotent) has the whole batch
 * in flight; an outlet that answers at once (log, HTTP) sends one after the other. Once a send fails no further one
 * is handed over; the batch's result is its confirmed prefix: the changes before the first one not confirmed.
 */
final class OutletBatch {
    /** What became of a batch: how many changes from its start the outlet confirmed, and the first error if any. */
    record Result(int confirmed, Exception error) {
    }

    private final Endpoint endpoint;
    private final AsyncProducer producer;
    private final ObjectWriter json;

    OutletBatch(Endpoint endpoint, AsyncProducer producer, ObjectWriter json) {
        this.endpoint = endpoint;
        this.producer = producer;
        this.json = json;
    }

    /** Sends {@code batch} and waits for every send handed over to be answered (or for {@code running} to turn false). */
    Result send(List<FeedChange> batch, BooleanSupplier running)
            throws InterruptedException {
        int n = batch.size();
        Exception[] errors = new Exception[n];
        boolean[] done = new boolean[n];
        CountDownLatch answered = new CountDownLatch(n);
        AtomicBoolean failed = new AtomicBoolean();
        int handed = 0;
        for (; handed < n; handed++) {
            if (failed.get() || !running.getAsBoolean()) {
                break; // the rest waits for the resend, which starts at the first change not confirmed
            }
            FeedChange change = batch.get(handed);
            Exchange exchange;
            try {
                exchange = exchange(change);
            } catch (JsonProcessingException e) {
                record(errors, done, handed, e, answered, failed);
                break;
            }
            int index = handed;
            producer.process(exchange, doneSync -> {
                record(errors, done, index, exchange.getException(), answered, failed);
            });
        }
        for (int i = handed; i < n; i++) {
            answered.countDown();
        }
        while (!answered.await(1, TimeUnit.SECONDS)) {
            if (!running.getAsBoolean()) {
                break; // stopping: what is not confirmed is sent again after the restart
            }
        }
        synchronized (done) {
            int confirmed = 0;
            while (confirmed < handed && done[confirmed] && errors[confirmed] == null) {
                confirmed++;
            }
            Exception error = confirmed < n ? firstError(errors, done, n) : null;
            return new Result(confirmed, error);
        }
    }

    private static void record(Exception[] errors, boolean[] done, int index, Exception error,
                               CountDownLatch answered, AtomicBoolean failed) {
        synchronized (done) {
            errors[index] = error;
            done[index] = true;
        }
        if (error != null) {
            failed.set(true);
        }
        answered.countDown();
    }

    private static Exception firstError(Exception[] errors, boolean[] done, int upTo) {
        synchronized (done) {
            for (int i = 0; i < upTo; i++) {
                if (done[i] && errors[i] != null) {
                    return errors[i];
                }
            }
            return null;
        }
    }

    private Exchange exchange(FeedChange change) throws JsonProcessingException {
        Exchange exchange = endpoint.createExchange();
        var m = exchange.getMessage();
        m.setBody(json.writeValueAsString(change.toJson()));
        m.setHeader(FeedHeaders.CHANGE_ID, change.id());
        m.setHeader(FeedHeaders.ACCOUNT_ID, change.accountId());
        m.setHeader(FeedHeaders.TICKET, change.ticket());
        m.setHeader(FeedHeaders.CHANGE_KIND, change.kind());
        m.setHeader(Exchange.CONTENT_TYPE, "application/json");
        return exchange;
    }
}
