package dev.metakit.inbox.worker;

import dev.metakit.inbox.reconcile.AccountReconcile;
import dev.metakit.inbox.reconcile.ReconcileRoutes;
import org.apache.camel.builder.RouteBuilder;

/**
 * The worker's orchestration (Java, not a route file: the bundle guarantees it): a ring of the doorbell waits a
 * moment for more, then drains the inbox: claim, reconcile each claimed account in parallel, complete or fail its
 * rows. Drains of one instance can overlap (the parallel split completes asynchronously, freeing the doorbell's
 * thread): a claim leaves out the accounts this instance is still working, and claims belong to a live instance, so
 * instances never work the same row at once. The doorbell is rung by {@link InboxDoorbell} (the ingest route after a
 * new row, the poll of routes/worker.camel.yaml, a drain that found work).
 */
public class WorkerRoutes extends RouteBuilder {
    public static final String DOORBELL_ROUTE = "metakit-worker-doorbell";
    public static final String DRAIN_ROUTE = "metakit-worker-drain";
    static final String DRAIN = "direct:drain-inbox";
    static final String WORK_PROPERTY = "metakitWork";

    @Override
    public void configure() {
        from(InboxDoorbell.QUEUE_URI + "?size=1&concurrentConsumers=1").routeId(DOORBELL_ROUTE).startupOrder(50)
                // let a burst gather: events for one account that arrive meanwhile fold into the same reconcile.
                // Synchronous, so the wait holds this one consumer thread and rings fold into one drain (an async
                // delay would hand each ring to the scheduler at once and start drains that split the due rows)
                .delay(simple("{{metakit.worker.coalesce-millis}}")).syncDelayed()
                .to(DRAIN);

        // direct: consumers start first and stop last: a producer still running at shutdown or reload would
        // otherwise wait on a direct endpoint with no consumer and the graceful stop would time out
        from(DRAIN).routeId(DRAIN_ROUTE).startupOrder(40)
                .setBody(method("inboxWorker", "claim"))
                .split(body()).parallelProcessing().executorService("metakitWorkerPool").id("reconcile-claimed-accounts")
                    // kept for its outcome: the reconcile replaces the body
                    .setProperty(WORK_PROPERTY, body())
                    // the deliveries' tickets are hints; replayed deliveries find changes with source=replay
                    .transform().body(AccountWork.class,
                            work -> AccountReconcile.forDeliveries(work.accountId(), work.hints(), work.trigger()))
                    .doTry()
                        .to(ReconcileRoutes.RECONCILE_ACCOUNT)
                        .bean("inboxWorker", "completed(${exchangeProperty." + WORK_PROPERTY + "})")
                    .doCatch(Exception.class)
                        .bean("inboxWorker", "failed(${exchangeProperty." + WORK_PROPERTY + "}, ${exception})")
                    .end()
                .end()
                // a claim that found work may have left more behind: ring again rather than wait for the poll
                .filter(simple("${body.size} > 0"))
                    .process("inboxDoorbell");
    }
}
