package dev.metakit.inbox.ingest;

import org.apache.camel.AsyncCallback;
import org.apache.camel.AsyncProcessor;
import org.apache.camel.Exchange;
import org.apache.camel.support.AsyncProcessorSupport;
import org.apache.camel.support.service.ServiceHelper;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

/**
 * The ingest route's store step: inserts the verified {@link Delivery} into the inbox, and lets the route go on only
 * when the group commit that holds its row is done. The insert is the dedupe ({@code ON CONFLICT DO NOTHING}): a
 * delivery whose key is already there is marked {@link Exchange#DUPLICATE_MESSAGE}, as Camel's idempotent consumer
 * marks one, and a key is never recorded without its row. A batch that fails, or a commit later than the timeout,
 * fails the exchange with {@link InboxUnavailableException}, which the route answers 503.
 *
 * <p>Asynchronous: no thread waits for the commit. Where the HTTP engine routes asynchronously (the bundle's own
 * server) the request holds no thread meanwhile; where it waits for the route (a host platform's engine), that wait
 * is the engine's.
 */
public class InboxStore extends AsyncProcessorSupport implements AsyncProcessor {
    /**
     * Exchange property an HTTP engine may set to an {@link Executor} on which the route should resume after the
     * commit (the bundle's front door: the connection's event loop). Without it the route resumes on the inbox
     * writer that committed, which then forms its next batch only after the rest of the route has run.
     */
    public static final String RESUME_ON_PROPERTY = "metakitResumeOn";

    private InboxRepository repository;

    @Override
    public boolean process(Exchange exchange, AsyncCallback callback) {
        CompletableFuture<Boolean> stored;
        try {
            stored = repository().submit(exchange.getProperty(InboxRepository.DELIVERY_PROPERTY, Delivery.class));
        } catch (RuntimeException e) {
            exchange.setException(e);
            callback.done(true);
            return true;
        }
        if (stored.isDone()) {
            // refused at once (fail-fast window, writers full): finish on this thread
            stored.whenComplete((isNew, failure) -> record(exchange, isNew, failure));
            callback.done(true);
            return true;
        }
        BiConsumer<Boolean, Throwable> resume = (isNew, failure) -> {
            record(exchange, isNew, failure);
            callback.done(false);
        };
        Executor resumeOn = exchange.getProperty(RESUME_ON_PROPERTY, Executor.class);
        if (resumeOn != null) {
            stored.whenCompleteAsync(resume, resumeOn);
        } else {
            stored.whenComplete(resume);
        }
        return false;
    }

    @Override
    protected void doStart() throws Exception {
        // the route starts its steps, and the repository's writers belong to this step now
        ServiceHelper.startService(repository());
    }

    @Override
    protected void doStop() throws Exception {
        ServiceHelper.stopService(repository);
    }

    private static void record(Exchange exchange, Boolean isNew, Throwable failure) {
        if (failure != null) {
            exchange.setException(InboxWriter.unavailable(failure));
        } else if (!isNew) {
            exchange.setProperty(Exchange.DUPLICATE_MESSAGE, Boolean.TRUE);
        }
    }

    private InboxRepository repository() {
        InboxRepository r = repository;
        if (r == null) {
            throw new IllegalStateException("inboxStore needs its repository (the inboxRepository bean)");
        }
        return r;
    }

    public void setRepository(InboxRepository repository) { this.repository = repository; }
}
