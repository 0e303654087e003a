package dev.metakit.inbox.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.metakit.inbox.trace.LogContext;
import dev.metakit.inbox.trace.TraceParent;
import org.apache.camel.AsyncProducer;
import org.apache.camel.Endpoint;
import org.apache.camel.Exchange;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongPredicate;

/**
 * Sends batches of changes (each of one account) to the outlet route, in seq order per account and the accounts side
 * by side: each account's batch is handed over by one of the {@code senders} (so an outlet that answers on the
 * caller's thread, such as HTTP, serves that many accounts at once instead of one after the other), and within an
 * account each send is handed to the route before the previous one is confirmed, so an outlet that confirms later
 * (Kafka's producer: acks from the broker, in order per partition, without duplicates or reordering on its retries when
 * idempotent) has the whole batch in flight at once; one that answers at once sends one after the other, which is as
 * fast as the account's order allows there.
 *
 * <p>A call is one step of the publisher: an account hands over for at most {@link #STEP_NANOS} (and at least one
 * change), so a step of accounts with long backlogs on a slow outlet ends soon, and its round reads again, marks what
 * went and takes in what was offered meanwhile. Once a send of an account fails no further one of that account is
 * handed over; an account's result is its confirmed prefix: the changes before its first one not confirmed. The
 * accounts are independent of each other.
 */
record OutletBatch(Endpoint endpoint, AsyncProducer producer, ObjectWriter json, Executor senders) {
    /** How long one step hands an account's changes over before it lets its round go on (mark, read, new accounts). */
    static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    /**
     * What became of an account's batch: how many changes from its start the outlet confirmed, its first error, and
     * whether the step ended before the whole batch was handed over (the rest is the next step's).
     */
    record Result(int confirmed, Exception error, boolean stepEnded) {
    }

    /**
     * Sends every account's batch and waits for every send handed over to be answered (or for {@code running} to turn
     * false). {@code maySend} is asked before each send of an account (its lease): false stops that account there.
     */
    Map<Long, Result> send(Map<Long, List<FeedChange>> batches, LongPredicate maySend, BooleanSupplier running)
            throws InterruptedException {
        Map<Long, Sends> sends = new HashMap<>();
        // every send answered (or not made), and every account's hand-over over: its count of sends is then known
        int total = batches.values().stream().mapToInt(List::size).sum() + batches.size();
        CountDownLatch answered = new CountDownLatch(total);
        long stepEnds = System.nanoTime() + STEP_NANOS;
        for (Map.Entry<Long, List<FeedChange>> e : batches.entrySet()) {
            Sends account = new Sends(e.getValue().size(), answered);
            sends.put(e.getKey(), account);
            try {
                senders.execute(() -> handOver(e.getValue(), account, () -> maySend.test(e.getKey()), stepEnds));
            } catch (RejectedExecutionException stopping) {
                account.handed(0, false);
            }
        }
        while (!answered.await(1, TimeUnit.SECONDS)) {
            if (!running.getAsBoolean()) {
                break; // stopping: what is not confirmed is sent again after the restart
            }
        }
        Map<Long, Result> results = new HashMap<>();
        sends.forEach((account, s) -> results.put(account, s.result()));
        return results;
    }

    private void handOver(List<FeedChange> batch, Sends sends, BooleanSupplier maySend, long stepEnds) {
        int handed = 0;
        boolean stepEnded = false;
        try {
            for (; handed < batch.size(); handed++) {
                if (sends.failed() || !maySend.getAsBoolean()) {
                    break; // the rest waits for the resend, which starts at the first change not confirmed
                }
                if (handed > 0 && System.nanoTime() - stepEnds > 0) {
                    stepEnded = true;
                    break;
                }
                Exchange exchange;
                try {
                    exchange = exchange(batch.get(handed));
                } catch (JsonProcessingException e) {
                    sends.record(handed, e);
                    handed++;
                    break;
                }
                int index = handed;
                FeedChange change = batch.get(handed);
                // the outlet's own lines (the default log line, a synchronous endpoint's) carry the account and the
                // reconcile's trace
                try (LogContext logContext = LogContext.of(change.accountId(), change.traceParent())) {
                    producer.process(exchange, doneSync -> sends.record(index, exchange.getException()));
                } catch (RuntimeException e) {
                    // an asynchronous producer answers through the callback; one that throws instead failed the send
                    sends.record(index, e);
                    handed++;
                    break;
                }
            }
        } finally {
            sends.handed(handed, stepEnded);
        }
    }

    /** One account's sends: which were answered and how. */
    private static final class Sends {
        private final Exception[] errors;
        private final boolean[] done;
        private final CountDownLatch answered;
        private volatile boolean failed;
        private int handed;
        private boolean stepEnded;

        Sends(int n, CountDownLatch answered) {
            this.errors = new Exception[n];
            this.done = new boolean[n];
            this.answered = answered;
        }

        boolean failed() {
            return failed;
        }

        /** A send's answer; the first one counts (a producer that throws after it answered has answered). */
        void record(int index, Exception error) {
            synchronized (this) {
                if (done[index]) {
                    return;
                }
                errors[index] = error;
                done[index] = true;
            }
            if (error != null) {
                failed = true;
            }
            answered.countDown();
        }

        /** {@code n} were handed over: the others are answered now (not sent), and the hand-over is over. */
        void handed(int n, boolean stepEnded) {
            synchronized (this) {
                handed = n;
                this.stepEnded = stepEnded;
            }
            for (int i = n; i <= errors.length; i++) {
                answered.countDown();
            }
        }

        synchronized Result result() {
            int confirmed = 0;
            while (confirmed < handed && done[confirmed] && errors[confirmed] == null) {
                confirmed++;
            }
            Exception error = null;
            for (int i = 0; i < handed && error == null; i++) {
                if (done[i]) {
                    error = errors[i];
                }
            }
            return new Result(confirmed, confirmed < errors.length ? error : null, stepEnded);
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
        if (change.traceParent() != null) {
            // the reconcile's context: Camel's tracing continues it, and the outlet's transport carries it on
            m.setHeader(TraceParent.HEADER, change.traceParent());
        }
        return exchange;
    }
}
