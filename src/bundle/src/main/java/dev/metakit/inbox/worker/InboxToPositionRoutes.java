package dev.metakit.inbox.worker;

import dev.metakit.inbox.metakit.MetaKitApi;
import dev.metakit.inbox.reconcile.AccountReconcile;
import dev.metakit.inbox.reconcile.FullReconcile;
import dev.metakit.inbox.reconcile.ReconcileResult;
import dev.metakit.inbox.reconcile.ReconcileSteps;
import org.apache.camel.Exchange;
import org.apache.camel.LoggingLevel;
import org.apache.camel.builder.RouteBuilder;

import java.util.function.Function;

/**
 * A delivery's way to its position, in one place: the bundle's Java routes (Java, not a route file: the bundle
 * guarantees them), in the order a claimed inbox row travels them. {@link #configure()} reads as the way:
 * <ol>
 * <li>{@link #DOORBELL_ROUTE}: a ring of the doorbell ({@link InboxDoorbell}: the ingest route after a new row, the
 * poll of routes/worker.camel.yaml, a drain that found work) waits a moment for more, then drains;</li>
 * <li>{@link #DRAIN_ROUTE}: claim ({@link InboxWorker#claim()}: one {@link AccountWork} per account), reconcile each
 * account in parallel, and back to the inbox: its rows completed, or failed (retry, backoff, dead letter);</li>
 * <li>{@link #RECONCILE_ACCOUNT_ROUTE}: one account against MetaKit's REST API: stamp the snapshot's time, GET its
 * open positions, plan the deals call, GET the deals if needed, apply the snapshot to {@code positions} and the
 * feed's outbox in one transaction;</li>
 * <li>{@link #FULL_RECONCILE_ROUTE}, {@link #REQUESTED_ROUTE}: the other way to the same reconcile, every known
 * account at once (the schedule of routes/reconcile.camel.yaml, the status watch's requests).</li>
 * </ol>
 * The routes are the map; what is code is in plain beans they call by name: {@code inboxWorker} ({@link InboxWorker}),
 * {@code reconcileSteps} ({@link ReconcileSteps}, which calls {@code AccountReconciler}) and {@code fullReconcile}
 * ({@link FullReconcile}). Two typed values ride beside the body, each in one exchange property, because the next
 * step replaces the body: the {@link AccountWork} a drain reports on ({@link #WORK_PROPERTY}) and the
 * {@link AccountReconcile} so far ({@link ReconcileSteps#RECONCILE}), which each MetaKit answer is folded into.
 * <p>
 * The MetaKit GET itself ({@link MetaKitApi#GET_ENDPOINT}) and the schedules stay in the route files integrators edit.
 * Drains of one instance can overlap (the parallel split completes asynchronously, freeing the doorbell's thread): a
 * claim leaves out the accounts this instance is still working, and claims belong to a live instance, so instances
 * never work the same row at once.
 */
public class InboxToPositionRoutes extends RouteBuilder {
    public static final String DOORBELL_ROUTE = "metakit-worker-doorbell";
    public static final String DRAIN_ROUTE = "metakit-worker-drain";
    public static final String RECONCILE_ACCOUNT_ROUTE = "metakit-reconcile-account";
    public static final String FULL_RECONCILE_ROUTE = "metakit-reconcile-all";
    public static final String REQUESTED_ROUTE = "metakit-reconcile-requested";

    /** in: the body, an {@link AccountReconcile}; out: the body, its {@link ReconcileResult} */
    public static final String RECONCILE_ACCOUNT = "direct:reconcile-account";
    /** a full reconcile now, in the caller's thread; header {@link FullReconcile#TRIGGER_HEADER} says why */
    public static final String FULL_RECONCILE = "direct:full-reconcile";
    /** a full reconcile asked for by another job (routes/status.camel.yaml): one waits at most, more fold into it */
    public static final String FULL_RECONCILE_REQUESTS = "seda:full-reconcile-requests";
    static final String DRAIN = "direct:drain-inbox";
    /** the {@link AccountWork} a drain's branch reports on, kept beside the body (which the reconcile replaces) */
    static final String WORK_PROPERTY = "metakitWork";

    /**
     * The endpoints Camel's tracing leaves out (its {@code excludePatterns}): the worker's doorbell and drain, so that
     * each account's reconcile is the root of a trace of its own (linked to its deliveries) rather than a child of
     * whichever ring woke the worker; and the route files' frequent timers that serve no one delivery (the worker's
     * and the feed's polls, the metrics refresh, the secret rotation's check), which would make a trace a second.
     */
    public static final String UNTRACED_ENDPOINTS = String.join(",", InboxDoorbell.QUEUE_URI + "*", DRAIN + "*",
            "timer:metakit-inbox-poll*", "timer:metakit-change-feed*", "timer:metakit-metrics-refresh*",
            "timer:metakit-webhook-rotation*");

    private static final String STEPS = "reconcileSteps";

    private final ReconcileSpans reconcileSpans = new ReconcileSpans();

    @Override
    public void configure() {
        doorbellWaitsForMoreThenDrains();
        drainClaimsReconcilesEachAccountAndReportsBack();
        reconcileOneAccountAgainstMetaKit();
        reconcileEveryKnownAccount();
        // stream caching off on these routes themselves, as on the route files' (streamCache: false): the bundle's
        // needs never change a host's own routes, which keep the host's setting
        getRouteCollection().getRoutes().forEach(route -> route.setStreamCache("false"));
    }

    private void doorbellWaitsForMoreThenDrains() {
        from(InboxDoorbell.QUEUE_URI + "?size=1&concurrentConsumers=1").routeId(DOORBELL_ROUTE).startupOrder(50)
                // let a burst gather: events for one account that arrive meanwhile fold into the same reconcile
                // (longer, up to the poll's period, while claims find nothing during an API outage, and cut short
                // when MetaKit answers again: ClaimPacing). In this one consumer thread, so that rings fold into one
                // drain (a wait handed to a scheduler would start drains at once that split the due rows)
                .bean("inboxWorker", "awaitNextClaim({{metakit.worker.coalesce-millis}},"
                        + " {{metakit.worker.poll-interval-millis}})")
                .to(DRAIN);
    }

    private void drainClaimsReconcilesEachAccountAndReportsBack() {
        // direct: consumers start first and stop last: a producer still running at shutdown or reload would
        // otherwise wait on a direct endpoint with no consumer and the graceful stop would time out
        from(DRAIN).routeId(DRAIN_ROUTE).startupOrder(40)
                .setBody(method("inboxWorker", "claim"))
                .split(body()).parallelProcessing().executorService("metakitWorkerPool").id("reconcile-claimed-accounts")
                    .setProperty(WORK_PROPERTY, body()) // kept for its outcome: the reconcile replaces the body
                    // the deliveries' tickets are hints; replayed deliveries find changes with source=replay
                    .transform().body(AccountWork.class, AccountWork::reconcile)
                    .process(reconcileSpans::begin).id("trace-reconcile") // its span, linked to its deliveries; its log context
                    .doTry()
                        .to(RECONCILE_ACCOUNT)
                        .bean("inboxWorker", "completed(${exchangeProperty." + WORK_PROPERTY + "}, ${body})")
                    .doCatch(Exception.class)
                        .bean("inboxWorker", "failed(${exchangeProperty." + WORK_PROPERTY + "}, ${exception})")
                    .doFinally()
                        .process(ReconcileSpans::end)
                    .end()
                .end()
                // a claim that found work may have left more behind: ring again rather than wait for the poll
                .filter(simple("${body.size} > 0"))
                    .process("inboxDoorbell");
    }

    /**
     * The AccountReconcile that comes in as the body rides beside it in {@link ReconcileSteps#RECONCILE} from here
     * on, each MetaKit answer folded into it; a steady reconcile is one call. The body goes out as the
     * ReconcileResult. Failures are the caller's to handle (the drain's retry policy, a full reconcile's progress).
     */
    private void reconcileOneAccountAgainstMetaKit() {
        from(RECONCILE_ACCOUNT).routeId(RECONCILE_ACCOUNT_ROUTE).startupOrder(20).errorHandler(noErrorHandler())
                .setProperty(ReconcileSteps.RECONCILE, method(STEPS, "begin")) // the snapshot's time: before any call
                .setBody(path(AccountReconcile::positionsPath))
                .enrich(MetaKitApi.GET_ENDPOINT).id("fetch-positions")
                .setProperty(ReconcileSteps.RECONCILE, method(STEPS, "positionsReceived"))
                .filter(e -> ReconcileSteps.carried(e).dealsNeeded()).id("deals-needed")
                    .setBody(path(AccountReconcile::dealsPath))
                    .enrich(MetaKitApi.GET_ENDPOINT).id("fetch-deals")
                    .setProperty(ReconcileSteps.RECONCILE, method(STEPS, "dealsReceived"))
                .end()
                .setBody(method(STEPS, "applyTraced"))
                .log(LoggingLevel.INFO, "dev.metakit.inbox.reconcile",
                        "Reconciled account ${exchangeProperty." + ReconcileSteps.RECONCILE + ".accountId}: ${body}");
    }

    /** One {@link AccountReconcile#fullScan} per known account, with bounded concurrency, each reporting back. */
    private void reconcileEveryKnownAccount() {
        from(FULL_RECONCILE_REQUESTS + "?size=1").routeId(REQUESTED_ROUTE).errorHandler(noErrorHandler())
                .to(FULL_RECONCILE);

        from(FULL_RECONCILE).routeId(FULL_RECONCILE_ROUTE).startupOrder(30).errorHandler(noErrorHandler())
                .setBody(method("fullReconcile", "begin"))
                .split(body()).parallelProcessing().executorService("metakitReconcilePool").id("reconcile-each-account")
                    .process(reconcileSpans::begin)
                    .doTry()
                        .to(RECONCILE_ACCOUNT)
                        .bean("fullReconcile", "accountDone")
                    .doCatch(Exception.class)
                        .bean("fullReconcile", "accountFailed")
                    .doFinally()
                        .process(ReconcileSpans::end)
                    .end()
                .end()
                .bean("fullReconcile", "finish");
    }

    /** The path of the next MetaKit GET, the body {@link MetaKitApi#GET_ENDPOINT} takes. */
    private static Function<Exchange, String> path(Function<AccountReconcile, String> call) {
        return e -> call.apply(ReconcileSteps.carried(e));
    }
}
