package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiDeal;
import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.metakit.MetaKitApi;
import dev.metakit.inbox.metakit.MetaKitJson;
import org.apache.camel.Exchange;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The steps of {@code direct:reconcile-account} that are code: which MetaKit call comes next, parsing its answer,
 * and applying the snapshot. State between the steps lives in exchange properties, because each enrich replaces the
 * message with MetaKit's answer.
 */
public class ReconcileSteps {
    /** The MetaKit call the next {@code direct:metakit-get} makes: path with its query. */
    public static final String CALL_PATH = "metakitCallPath";
    static final String ACCOUNT = "metakitAccountId";
    static final String HINTS = "metakitHints";
    static final String SNAPSHOT_AT = "metakitSnapshotAt";
    static final String POSITIONS = "metakitPositions";
    static final String DEALS_QUERY = "metakitDealsQuery";
    public static final String DEALS_NEEDED = "metakitDealsNeeded";
    /** Header set by full reconciles (periodic, status watch): also scan the deals for positions never recorded. */
    public static final String FULL_SCAN_HEADER = "MetaKitFullScan";
    static final String FULL_SCAN = "metakitFullScan";
    /** what started the reconcile ({@link ReconcileRoutes#TRIGGER_HEADER}; absent: a delivery did), kept for the
     * changes it finds: headers do not survive the route's enrich calls */
    static final String TRIGGER = "metakitTrigger";
    /** A full scan re-reads this much before the previous one's snapshot (deals stamped a little late). */
    static final Duration SCAN_MARGIN = Duration.ofMinutes(1);

    private final MetaKitApi api = new MetaKitApi();
    private final MetaKitJson json = new MetaKitJson();
    private AccountReconciler accountReconciler;
    private Clock clock = Clock.systemUTC();
    private Duration scanLookback = AccountReconciler.DEFAULT_HINT_LOOKBACK;
    /*
     * Per account, the snapshot of its last committed full scan. Not accounts.last_snapshot_at: worker reconciles
     * move that without reading any deals. In memory on purpose: after a restart (or on an instance that did not
     * run the last scan) the window is the lookback, wider than needed, never narrower.
     */
    private final Map<Long, Instant> scannedUpTo = new ConcurrentHashMap<>();

    /** Input: header {@link ReconcileRoutes#ACCOUNT_HEADER}, body the hints (a collection of {@link Hint}, or nothing). */
    public void begin(Exchange exchange) {
        long account = exchange.getMessage().getHeader(ReconcileRoutes.ACCOUNT_HEADER, Long.class);
        Object body = exchange.getMessage().getBody();
        List<Hint> hints = body instanceof Collection<?> c
                ? c.stream().filter(Hint.class::isInstance).map(Hint.class::cast).toList() : List.of();
        exchange.setProperty(ACCOUNT, account);
        exchange.setProperty(HINTS, hints);
        // headers do not survive the enrich calls: keep the trigger for apply
        exchange.setProperty(TRIGGER, exchange.getMessage().getHeader(ReconcileRoutes.TRIGGER_HEADER, "event", String.class));
        exchange.setProperty(FULL_SCAN, Boolean.TRUE.equals(
                exchange.getMessage().getHeader(FULL_SCAN_HEADER, Boolean.class)));
        // taken before the first call: the snapshot shows the account at this instant or later, never earlier
        exchange.setProperty(SNAPSHOT_AT, clock.instant());
        exchange.setProperty(CALL_PATH, api.positionsPath(account));
    }

    public void positionsReceived(Exchange exchange) {
        long account = exchange.getProperty(ACCOUNT, Long.class);
        List<ApiPosition> positions = json.positions(exchange.getMessage().getBody(byte[].class));
        exchange.setProperty(POSITIONS, positions);
        DealsQuery query = accountReconciler.planDeals(account, positions, hints(exchange));
        if (fullScan(exchange)) {
            Instant scanFrom = scanFrom(account, exchange.getProperty(SNAPSHOT_AT, Instant.class));
            query = DealsQuery.from(query.needed() && query.from().isBefore(scanFrom) ? query.from() : scanFrom,
                    query.tickets());
        }
        exchange.setProperty(DEALS_QUERY, query);
        exchange.setProperty(DEALS_NEEDED, query.needed());
        if (query.needed()) {
            exchange.setProperty(CALL_PATH, api.dealsPath(account, query.from(), query.to()));
        }
    }

    /** Applies the snapshot in one transaction; the body becomes the {@link ReconcileResult}. */
    public ReconcileResult apply(Exchange exchange) {
        long account = exchange.getProperty(ACCOUNT, Long.class);
        boolean dealsFetched = Boolean.TRUE.equals(exchange.getProperty(DEALS_NEEDED, Boolean.class));
        List<ApiDeal> deals = dealsFetched ? json.deals(exchange.getMessage().getBody(byte[].class)) : List.of();
        @SuppressWarnings("unchecked")
        List<ApiPosition> positions = exchange.getProperty(POSITIONS, List.class);
        Instant snapshotAt = exchange.getProperty(SNAPSHOT_AT, Instant.class);
        List<Hint> hints = hints(exchange);
        boolean fullScan = fullScan(exchange) && dealsFetched;
        if (fullScan) {
            List<Hint> missing = accountReconciler.unrecordedClosures(account, positions, deals);
            if (!missing.isEmpty()) {
                List<Hint> all = new ArrayList<>(hints);
                all.addAll(missing);
                hints = all;
            }
        }
        ReconcileResult result = accountReconciler.apply(account, snapshotAt, positions, deals, hints,
                exchange.getProperty(TRIGGER, String.class));
        if (fullScan && !result.stale()) {
            scannedUpTo.merge(account, snapshotAt, (a, b) -> a.isAfter(b) ? a : b);
        }
        return result;
    }

    private Instant scanFrom(long account, Instant snapshotAt) {
        Instant last = scannedUpTo.get(account);
        return last != null ? last.minus(SCAN_MARGIN) : snapshotAt.minus(scanLookback);
    }

    private static boolean fullScan(Exchange exchange) {
        return Boolean.TRUE.equals(exchange.getProperty(FULL_SCAN, Boolean.class));
    }

    @SuppressWarnings("unchecked")
    private static List<Hint> hints(Exchange exchange) {
        return exchange.getProperty(HINTS, List.class);
    }

    public void setAccountReconciler(AccountReconciler accountReconciler) {
        this.accountReconciler = accountReconciler;
    }

    /** How far back the first full scan of an account (since this instance started) reads deals. */
    public void setScanLookback(Duration scanLookback) {
        this.scanLookback = scanLookback;
    }

    public void setClock(Clock clock) {
        this.clock = clock;
    }
}
