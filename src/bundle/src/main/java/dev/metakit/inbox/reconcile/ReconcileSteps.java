package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.metakit.MetaKitJson;
import dev.metakit.inbox.trace.ExchangeSpan;
import io.opentelemetry.context.Scope;
import org.apache.camel.Body;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangeProperty;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The steps of one account's reconcile (the route {@code metakit-reconcile-account} of the worker's
 * {@code InboxToPositionRoutes}) that are code, the bean {@code reconcileSteps}: each takes the
 * {@link AccountReconcile} so far and returns it with what it learned folded in (the snapshot's time, MetaKit's
 * positions and the deals to ask for, the deals), and the last applies it. The route keeps the value in its one
 * exchange property, {@link #RECONCILE}, because each MetaKit call replaces the message body.
 */
public class ReconcileSteps {
    /**
     * The one exchange property of an account's reconcile: its {@link AccountReconcile} so far, kept beside the body,
     * which each MetaKit call replaces with its answer. Still there when the reconcile failed, for the caller's report.
     */
    public static final String RECONCILE = "metakitReconcile";
    /** A full scan re-reads this much before the previous one's snapshot (deals stamped a little late). */
    static final Duration SCAN_MARGIN = Duration.ofMinutes(1);
    /** How far back the first full scan of an account (since this instance started) reads deals. */
    static final Duration SCAN_LOOKBACK = AccountReconciler.DEFAULT_HINT_LOOKBACK;

    private final MetaKitJson json = new MetaKitJson();
    private AccountReconciler accountReconciler;
    private Clock clock = Clock.systemUTC();
    /*
     * Per account, the snapshot of its last committed full scan. Not accounts.last_snapshot_at: worker reconciles
     * move that without reading any deals. In memory on purpose: after a restart (or on an instance that did not
     * run the last scan) the window is the lookback, wider than needed, never narrower.
     */
    private final Map<Long, Instant> scannedUpTo = new ConcurrentHashMap<>();

    /** Stamps the snapshot's time, taken before the first call: the snapshot shows the account then or later. */
    public AccountReconcile begin(@Body AccountReconcile request) {
        return request.askedAt(clock.instant());
    }

    /** Folds in MetaKit's open positions and plans the deals call (a full scan widens its window to the scan's). */
    public AccountReconcile positionsReceived(@ExchangeProperty(RECONCILE) AccountReconcile reconcile,
                                              @Body byte[] answer) {
        long account = reconcile.accountId();
        List<ApiPosition> positions = json.positions(answer);
        DealsQuery query = accountReconciler.planDeals(account, positions, reconcile.hints());
        if (reconcile.fullScan()) {
            Instant scanFrom = scanFrom(account, reconcile.snapshotAt());
            if (reconcile.backlogFrom() != null && reconcile.backlogFrom().isBefore(scanFrom)) {
                scanFrom = reconcile.backlogFrom(); // the deliveries a catch-up settles unread may name older closes
            }
            query = DealsQuery.from(query.needed() && query.from().isBefore(scanFrom) ? query.from() : scanFrom,
                    query.tickets());
        }
        return reconcile.withPositions(positions, query);
    }

    /** Folds in the deals MetaKit answered. */
    public AccountReconcile dealsReceived(@ExchangeProperty(RECONCILE) AccountReconcile reconcile,
                                          @Body byte[] answer) {
        return reconcile.withDeals(json.deals(answer));
    }

    /** Applies the snapshot in one transaction; a full scan also records closes no delivery named. */
    public ReconcileResult apply(@ExchangeProperty(RECONCILE) AccountReconcile reconcile) {
        long account = reconcile.accountId();
        List<Hint> hints = reconcile.hints();
        boolean fullScan = reconcile.fullScan() && reconcile.dealsNeeded();
        if (fullScan) {
            List<Hint> missing = accountReconciler.unrecordedClosures(account, reconcile.positions(), reconcile.deals());
            if (!missing.isEmpty()) {
                List<Hint> all = new ArrayList<>(hints);
                all.addAll(missing);
                hints = all;
            }
        }
        ReconcileResult result = accountReconciler.apply(account, reconcile.snapshotAt(), reconcile.positions(),
                reconcile.deals(), hints, reconcile.trigger());
        if (fullScan && !result.stale()) {
            scannedUpTo.merge(account, reconcile.snapshotAt(), (a, b) -> a.isAfter(b) ? a : b);
        }
        return result;
    }

    /**
     * {@link #apply}, with the reconcile's span current (none when tracing is off): each change it writes keeps that
     * span's context, which the feed sends downstream.
     */
    public ReconcileResult applyTraced(@ExchangeProperty(RECONCILE) AccountReconcile reconcile, Exchange exchange) {
        try (Scope span = ExchangeSpan.makeCurrent(exchange)) {
            return apply(reconcile);
        }
    }

    /** The reconcile an exchange carries in {@link #RECONCILE} (null before its first step). */
    public static AccountReconcile carried(Exchange exchange) {
        return exchange.getProperty(RECONCILE, AccountReconcile.class);
    }

    private Instant scanFrom(long account, Instant snapshotAt) {
        Instant last = scannedUpTo.get(account);
        return last != null ? last.minus(SCAN_MARGIN) : snapshotAt.minus(SCAN_LOOKBACK);
    }

    public void setAccountReconciler(AccountReconciler accountReconciler) {
        this.accountReconciler = accountReconciler;
    }

    public void setClock(Clock clock) {
        this.clock = clock;
    }
}
