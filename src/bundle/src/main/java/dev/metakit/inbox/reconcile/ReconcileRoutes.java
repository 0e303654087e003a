package dev.metakit.inbox.reconcile;

import org.apache.camel.builder.RouteBuilder;

/**
 * The reconcile's orchestration, whose correctness the bundle guarantees (so Java, not a route file): one account
 * against MetaKit's REST API, and a full reconcile of every known account. The REST calls themselves
 * ({@code direct:metakit-get}) and the schedules that start a full reconcile stay in the route files integrators edit.
 */
public class ReconcileRoutes extends RouteBuilder {
    /** in: header {@link #ACCOUNT_HEADER}, body the hints (tickets named by deliveries) or nothing */
    public static final String RECONCILE_ACCOUNT = "direct:reconcile-account";
    /** a full reconcile now, in the caller's thread; header {@link #TRIGGER_HEADER} says why (default periodic) */
    public static final String FULL_RECONCILE = "direct:full-reconcile";
    /** a full reconcile asked for by another job (routes/status.camel.yaml): one waits at most, more fold into it */
    public static final String FULL_RECONCILE_REQUESTS = "seda:full-reconcile-requests";
    public static final String ACCOUNT_HEADER = "MetaKitAccountId";
    /** who started a reconcile: periodic, status-watch, manual (the ops page), replay (replayed deliveries, the
     * worker); absent: event (the worker) */
    public static final String TRIGGER_HEADER = "MetaKitTrigger";

    public static final String RECONCILE_ACCOUNT_ROUTE = "metakit-reconcile-account";
    public static final String FULL_RECONCILE_ROUTE = "metakit-reconcile-all";
    public static final String REQUESTED_ROUTE = "metakit-reconcile-requested";
    /** the MetaKit GET of routes/metakit-api.camel.yaml: path in property metakitCallPath, answer as body */
    static final String METAKIT_GET = "direct:metakit-get";

    @Override
    public void configure() {
        // failures are the caller's to handle (the worker's retry policy, a full reconcile's progress)
        errorHandler(noErrorHandler());

        from(RECONCILE_ACCOUNT).routeId(RECONCILE_ACCOUNT_ROUTE).startupOrder(20)
                .bean("reconcileSteps", "begin")
                .enrich(METAKIT_GET).id("fetch-positions")
                .bean("reconcileSteps", "positionsReceived")
                .filter(exchangeProperty("metakitDealsNeeded")).id("deals-needed")
                    .enrich(METAKIT_GET).id("fetch-deals")
                .end()
                .bean("reconcileSteps", "apply")
                .log(org.apache.camel.LoggingLevel.INFO, "dev.metakit.inbox.reconcile",
                        "Reconciled account ${exchangeProperty.metakitAccountId}: ${body}");

        from(FULL_RECONCILE_REQUESTS + "?size=1").routeId(REQUESTED_ROUTE)
                .to(FULL_RECONCILE);

        from(FULL_RECONCILE).routeId(FULL_RECONCILE_ROUTE).startupOrder(30)
                .setBody(method("fullReconcile", "begin"))
                .split(body()).parallelProcessing().executorService("metakitReconcilePool").id("reconcile-each-account")
                    .setHeader(ACCOUNT_HEADER, body())
                    // a full reconcile also reads the account's recent deals: a position opened and closed while both
                    // of its deliveries were lost is in no positions list and named by no delivery, only by its deals
                    .setHeader(ReconcileSteps.FULL_SCAN_HEADER, constant(true))
                    .setBody(constant(""))
                    .doTry()
                        .to(RECONCILE_ACCOUNT)
                        .bean("fullReconcile", "accountDone")
                    .doCatch(Exception.class)
                        .bean("fullReconcile", "accountFailed")
                    .end()
                .end()
                .bean("fullReconcile", "finish");
    }
}
