package dev.metakit.inbox.ingest;

import org.apache.camel.AsyncCallback;
import org.apache.camel.Exchange;
import org.apache.camel.Navigate;
import org.apache.camel.Route;
import org.apache.camel.processor.idempotent.IdempotentConsumer;
import org.apache.camel.support.AsyncProcessorSupport;
import org.apache.camel.support.ExchangeHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

/**
 * The ingest route's hand-off to the inbox's group commit, the step before its {@code idempotentConsumer} on
 * {@link InboxRepository}. Camel's idempotent consumer calls its repository's {@code add} synchronously, and
 * {@code add} is the inbox insert, which returns only after the commit: called as it comes, it would hold a thread per
 * delivery in flight, woken once per delivery. So this step starts that very insert early, with the EIP's own key
 * expression, returns at once, and resumes the route when the batch holding the row has committed (on the thread
 * that completed the commit); the EIP's {@code add} then returns that insert's outcome. No thread waits for a commit,
 * and the EIP still decides: its key, its duplicate marking, its options.
 *
 * <p>It starts nothing where the EIP would not insert: with no eager idempotent consumer on the inbox after it in the
 * route, or an expression that gives no key, the route goes on as if the step were not there, on a thread that may
 * wait (the EIP's own {@code add} then inserts and waits, as without this step). A failed insert is the exchange's
 * exception, answered 503 by the route.
 *
 * <p>The EIP's key expression is evaluated twice, here and by the EIP, so it must give one key per exchange, as any
 * idempotent consumer's must (one that does not gets a row under each key). The steps inside the EIP run on the
 * inbox writer's thread that committed, right after the commit: quick work only (the shipped route sets the answer
 * and rings the worker's doorbell); slow work belongs to the worker or the change feed.
 */
public class InboxHandOff extends AsyncProcessorSupport {
    private static final Logger LOG = LoggerFactory.getLogger(InboxHandOff.class);
    private static final int MAX_DEPTH = 64;
    /** past this many routes remembered, the replaced ones are forgotten (a dev run reloads routes again and again) */
    private static final int MAX_ROUTES_REMEMBERED = 64;

    private InboxRepository repository;
    /**
     * per route: the idempotent consumer on the inbox that follows this step, if the route has one. Keyed by the
     * route itself, so a route reloaded with another key expression is looked at again.
     */
    private final Map<Route, Optional<IdempotentConsumer>> consumers = new ConcurrentHashMap<>();
    private volatile ExecutorService waitingThreads;

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        try {
            return handOff(exchange, callback);
        } catch (RuntimeException e) {
            // the key expression failed, or the pool of the fallback is gone with a stop: answered 503 by the route
            exchange.setException(e);
            callback.done(true);
            return true;
        }
    }

    private boolean handOff(Exchange exchange, AsyncCallback callback) {
        IdempotentConsumer eip = consumerOf(exchange).orElse(null);
        if (eip != null && !eip.isEager()) {
            // such an EIP would record the key after the answer: InboxRepository.contains refuses it at once
            callback.done(true);
            return true;
        }
        String key = eip == null ? null : eip.getMessageIdExpression().evaluate(exchange, String.class);
        if (key == null) {
            // nothing to start: the EIP's add (if any) inserts and waits, on a thread that may
            waitingThreads(exchange).execute(() -> callback.done(false));
            return false;
        }
        // refused at once (the gate, a stop, the database just failed): the exception, answered 503
        CompletableFuture<Boolean> committed = repository.insert(exchange, key);
        if (committed.isDone()) {
            settle(exchange, key, committed);
            callback.done(true);
            return true;
        }
        committed.whenComplete((isNew, failure) -> {
            settle(exchange, key, committed);
            callback.done(false);
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

    private Optional<IdempotentConsumer> consumerOf(Exchange exchange) {
        String routeId = ExchangeHelper.getAtRouteId(exchange);
        if (routeId == null) {
            routeId = exchange.getFromRouteId();
        }
        Route route = routeId == null ? null : exchange.getContext().getRoute(routeId);
        if (route == null) {
            return Optional.empty();
        }
        if (consumers.size() > MAX_ROUTES_REMEMBERED) {
            consumers.keySet().removeIf(r -> exchange.getContext().getRoute(r.getRouteId()) != r);
        }
        return consumers.computeIfAbsent(route, this::find);
    }

    private Optional<IdempotentConsumer> find(Route route) {
        List<IdempotentConsumer> found = new ArrayList<>();
        collect(route.navigate(), found, Collections.newSetFromMap(new IdentityHashMap<>()), 0);
        if (found.size() != 1) {
            LOG.warn("Route {} has {} idempotentConsumer(s) on the inbox after its hand-off, not one: each delivery "
                    + "waits for its commit on a thread of its own", route.getRouteId(), found.size());
            return Optional.empty();
        }
        return Optional.of(found.get(0));
    }

    private void collect(Object node, List<IdempotentConsumer> found, Set<Object> seen, int depth) {
        if (node == null || depth > MAX_DEPTH || !seen.add(node)) {
            return;
        }
        if (node instanceof IdempotentConsumer eip && eip.getIdempotentRepository() == repository) {
            found.add(eip);
        }
        if (node instanceof Navigate<?> navigate && navigate.hasNext()) {
            for (Object next : navigate.next()) {
                collect(next, found, seen, depth + 1);
            }
        }
    }

    private ExecutorService waitingThreads(Exchange exchange) {
        ExecutorService pool = waitingThreads;
        if (pool == null) {
            synchronized (this) {
                pool = waitingThreads;
                if (pool == null) {
                    pool = exchange.getContext().getExecutorServiceManager()
                            .newCachedThreadPool(this, "metakit-inbox-store");
                    waitingThreads = pool;
                }
            }
        }
        return pool;
    }

    @Override
    protected void doStart() {
        if (repository == null) {
            throw new IllegalStateException("inboxHandOff needs the inbox's repository (repository: #bean:inboxRepository)");
        }
    }

    @Override
    protected void doStop() {
        consumers.clear();
        ExecutorService pool = waitingThreads;
        waitingThreads = null;
        if (pool != null) {
            pool.shutdown();
        }
    }

    public void setRepository(InboxRepository repository) { this.repository = repository; }
}
