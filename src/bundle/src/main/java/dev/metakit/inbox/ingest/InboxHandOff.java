package dev.metakit.inbox.ingest;

import dev.metakit.inbox.trace.LogContext;
import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.support.AsyncProcessorSupport;

import java.util.concurrent.CompletableFuture;

/**
 * The ingest route's hand-off to the inbox's group commit, the step before its {@code idempotentConsumer} on
 * {@link InboxRepository}. Camel's idempotent consumer calls its repository's {@code add} synchronously, and
 * {@code add} is the inbox insert, which returns only after the commit: called as it comes, it would hold a thread per
 * delivery in flight. So this step starts that insert early, under the key the route names in one place (the exchange
 * property {@code metakitDeliveryKey}, which the EIP's key expression reads), returns at once, and resumes the route
 * when the batch holding the row has committed; the EIP's {@code add} then returns that insert's outcome.
 *
 * <p>It looks at nothing else in the route, so a step added before it, between it and the EIP, or after the EIP leaves
 * it as it is. An EIP that asks for another key than the one staged is still answered correctly: its {@code add}
 * inserts under its own key and waits for that commit ({@link InboxRepository#add(Exchange, String)}, which says so
 * in one WARN line). A refused or failed insert is the exchange's exception, answered 503 by the route.
 *
 * <p>The rest of the route runs on the thread that completes the insert (an inbox writer's, or the deadline watch's),
 * inside {@link AsyncCallback#done}: there it carries the delivery's logging context ({@link DeliveryLogContext}), so
 * the lines of the steps after the store (the 503 line, a {@code log} step an integrator adds) name the delivery and
 * its trace; taken off again when the route leaves the thread.
 */
public class InboxHandOff extends AsyncProcessorSupport {
    private final DeliveryLogContext logContext = new DeliveryLogContext();
    private InboxRepository repository;

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        String key = exchange.getProperty(InboxRepository.DELIVERY_KEY_PROPERTY, String.class);
        CompletableFuture<Boolean> committed;
        try {
            if (key == null) {
                throw new IllegalStateException("no " + InboxRepository.DELIVERY_KEY_PROPERTY + " on the exchange: "
                        + "hand-off-to-group-commit must come after verify-signature");
            }
            // refused at once (the gate, a stop, the database just failed): the exception, answered 503
            committed = repository.insert(exchange, key);
        } catch (RuntimeException e) {
            exchange.setException(e);
            callback.done(true);
            return true;
        }
        if (committed.isDone()) {
            settle(exchange, key, committed);
            callback.done(true);
            return true;
        }
        committed.whenComplete((isNew, failure) -> {
            settle(exchange, key, committed);
            try (LogContext delivery = logContext.open(exchange)) {
                callback.done(false);
            }
        });
        return false;
    }

    private static void settle(Exchange exchange, String key, CompletableFuture<Boolean> committed) {
        try {
            exchange.setProperty(InboxRepository.STAGED_PROPERTY,
                    new InboxRepository.StagedInsert(key, committed.join()));
        } catch (RuntimeException e) {
            exchange.setException(InboxWriter.unavailable(e));
        }
    }

    @Override
    protected void doStart() {
        if (repository == null) {
            throw new IllegalStateException("inboxHandOff needs the inbox's repository (repository: #bean:inboxRepository)");
        }
    }

    public void setRepository(InboxRepository repository) { this.repository = repository; }
}
