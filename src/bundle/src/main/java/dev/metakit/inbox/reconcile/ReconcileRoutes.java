package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.MetaKitApi;
import org.apache.camel.Exchange;
import org.apache.camel.LoggingLevel;
import org.apache.camel.builder.RouteBuilder;

import java.util.function.Function;

/**
 * The reconcile's orchestration, whose correctness the bundle guarantees (so Java, not a route file): one account
 * against MetaKit's REST API, and a full reconcile of every known account. The REST calls themselves
 * ({@link MetaKitApi#GET_ENDPOINT}) and the schedules that start a full reconcile stay in the route files integrators
 * edit.
 */
public class ReconcileRoutes extends RouteBuilder {
    /** in: the body, an {@link AccountReconcile}; out: the body, its {@link ReconcileResult} */
    public static final String RECONCILE_ACCOUNT = "direct:reconcile-account";
    /** a full reconcile now, in the caller's thread; header {@link #TRIGGER_HEADER} says why (default periodic) */
    public static final String FULL_RECONCILE = "direct:full-reconcile";
    /** a full reconcile asked for by another job (routes/status.camel.yaml): one waits at most, more fold into it */
    public static final String FULL_RECONCILE_REQUESTS = "seda:full-reconcile-requests";
    /** who started a full reconcile: periodic (the default), status-watch, or any word a caller gives */
    public static final String TRIGGER_HEADER = "MetaKitTrigger";

    public static final String RECONCILE_ACCOUNT_ROUTE = "metakit-reconcile-account";
    public static final String FULL_RECONCILE_ROUTE = "metakit-reconcile-all";
    public static final String REQUESTED_ROUTE = "metakit-reconcile-requested";
    /**
     * The one exchange property of an account's reconcile: its {@link AccountReconcile} so far, kept beside the body,
     * which each MetaKit call replaces with its answer. Still there when the reconcile failed, for the caller's report.
     */
    static final String RECONCILE = "metakitReconcile";
    private static final String STEPS = "reconcileSteps";

    @Override
    public void configure() {
        // failures are the caller's to handle (the worker's retry policy, a full reconcile's progress)
        errorHandler(noErrorHandler());

        // One account. The AccountReconcile that comes in as the body rides beside it in RECONCILE from here on, each
        // MetaKit answer folded into it: ask for the open positions, plan from them and the table which deals to ask
        // for, ask for those only if needed (a steady reconcile is one call), then apply the snapshot in one
        // transaction. The body goes out as the ReconcileResult.
        from(RECONCILE_ACCOUNT).routeId(RECONCILE_ACCOUNT_ROUTE).startupOrder(20)
                .setProperty(RECONCILE, method(STEPS, "begin")) // the snapshot's time: before the first call
                .setBody(path(AccountReconcile::positionsPath))
                .enrich(MetaKitApi.GET_ENDPOINT).id("fetch-positions")
                .setProperty(RECONCILE, method(STEPS, "positionsReceived"))
                .filter(e -> reconcile(e).dealsNeeded()).id("deals-needed")
                    .setBody(path(AccountReconcile::dealsPath))
                    .enrich(MetaKitApi.GET_ENDPOINT).id("fetch-deals")
                    .setProperty(RECONCILE, method(STEPS, "dealsReceived"))
                .end()
                .setBody(method(STEPS, "apply"))
                .log(LoggingLevel.INFO, "dev.metakit.inbox.reconcile",
                        "Reconciled account ${exchangeProperty." + RECONCILE + ".accountId}: ${body}");

        from(FULL_RECONCILE_REQUESTS + "?size=1").routeId(REQUESTED_ROUTE)
                .to(FULL_RECONCILE);

        from(FULL_RECONCILE).routeId(FULL_RECONCILE_ROUTE).startupOrder(30)
                // one AccountReconcile.fullScan per known account
                .setBody(method("fullReconcile", "begin"))
                .split(body()).parallelProcessing().executorService("metakitReconcilePool").id("reconcile-each-account")
                    .doTry()
                        .to(RECONCILE_ACCOUNT)
                        .bean("fullReconcile", "accountDone")
                    .doCatch(Exception.class)
                        .bean("fullReconcile", "accountFailed")
                    .end()
                .end()
                .bean("fullReconcile", "finish");
    }

    /** The reconcile an exchange of {@link #RECONCILE_ACCOUNT} carries (null before its first step). */
    static AccountReconcile reconcile(Exchange exchange) {
        return exchange.getProperty(RECONCILE, AccountReconcile.class);
    }

    /** The path of the next MetaKit GET, the body {@link MetaKitApi#GET_ENDPOINT} takes. */
    private static Function<Exchange, String> path(Function<AccountReconcile, String> call) {
        return e -> call.apply(reconcile(e));
    }
}
