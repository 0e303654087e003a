package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiDeal;
import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.metakit.MetaKitApi;
import dev.metakit.inbox.metakit.MetaKitJson;
import org.apache.camel.Exchange;

import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.List;

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

    private final MetaKitApi api = new MetaKitApi();
    private final MetaKitJson json = new MetaKitJson();
    private AccountReconciler accountReconciler;
    private Clock clock = Clock.systemUTC();

    /** Input: header {@code MetaKitAccountId}, body the hints (a collection of {@link Hint}, or nothing). */
    public void begin(Exchange exchange) {
        long account = exchange.getMessage().getHeader("MetaKitAccountId", Long.class);
        Object body = exchange.getMessage().getBody();
        List<Hint> hints = body instanceof Collection<?> c
                ? c.stream().filter(Hint.class::isInstance).map(Hint.class::cast).toList() : List.of();
        exchange.setProperty(ACCOUNT, account);
        exchange.setProperty(HINTS, hints);
        // taken before the first call: the snapshot shows the account at this instant or later, never earlier
        exchange.setProperty(SNAPSHOT_AT, clock.instant());
        exchange.setProperty(CALL_PATH, api.positionsPath(account));
    }

    public void positionsReceived(Exchange exchange) {
        long account = exchange.getProperty(ACCOUNT, Long.class);
        List<ApiPosition> positions = json.positions(exchange.getMessage().getBody(byte[].class));
        exchange.setProperty(POSITIONS, positions);
        DealsQuery query = accountReconciler.planDeals(account, positions, hints(exchange));
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
        return accountReconciler.apply(account, exchange.getProperty(SNAPSHOT_AT, Instant.class), positions, deals,
                hints(exchange));
    }

    @SuppressWarnings("unchecked")
    private static List<Hint> hints(Exchange exchange) {
        return exchange.getProperty(HINTS, List.class);
    }

    public void setAccountReconciler(AccountReconciler accountReconciler) {
        this.accountReconciler = accountReconciler;
    }

    public void setClock(Clock clock) {
        this.clock = clock;
    }
}
