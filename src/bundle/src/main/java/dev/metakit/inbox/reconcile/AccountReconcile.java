package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiDeal;
import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.metakit.MetaKitApi;

import java.time.Instant;
import java.util.List;

/**
 * One account's reconcile as its route carries it from step to step: what was asked (the account, the
 * tickets its deliveries named, what started it, whether to scan its deals for positions never recorded), then what
 * MetaKit answered, each answer folded in by the step that received it ({@link ReconcileSteps}). Immutable: a step
 * returns a new value.
 *
 * @param trigger    what started it, the {@code source} of the changes it finds: {@code event} (deliveries),
 *                   {@code replay} (replayed deliveries), {@code periodic}, {@code status-watch}, {@code manual}, ...
 * @param fullScan   also read the account's recent deals: a position opened and closed while both of its deliveries
 *                   were lost is in no positions list and named by no delivery, only by its deals (full reconciles)
 * @param backlogFrom with {@code fullScan}: read the deals from this instant at the latest, where the deliveries it
 *                   settles without reading them begin (a retry's catch-up of an account's backlog); null otherwise
 * @param snapshotAt when the positions were asked for (null until then): the snapshot shows the account at this
 *                   instant or later, never earlier
 * @param positions  MetaKit's open positions (null until they arrived)
 * @param dealsQuery the deals to ask for, planned from the positions and the table (null until planned)
 * @param deals      the deals MetaKit answered (empty when none were asked for)
 */
public record AccountReconcile(long accountId, List<Hint> hints, String trigger, boolean fullScan, Instant backlogFrom,
                               Instant snapshotAt, List<ApiPosition> positions, DealsQuery dealsQuery,
                               List<ApiDeal> deals) {
    /** the trigger of a reconcile that deliveries asked for */
    public static final String EVENT = "event";
    private static final MetaKitApi API = new MetaKitApi();

    public AccountReconcile {
        hints = hints == null ? List.of() : List.copyOf(hints);
        trigger = trigger == null ? EVENT : trigger;
        deals = deals == null ? List.of() : deals;
    }

    /** A reconcile that deliveries asked for: their tickets are the hints. */
    public static AccountReconcile forDeliveries(long accountId, List<Hint> hints, String trigger) {
        return new AccountReconcile(accountId, hints, trigger, false, null, null, null, null, null);
    }

    /**
     * A reconcile that settles an account's whole backlog (a retry that goes through after the account's reconciles
     * failed): {@code hints} are the claimed rows' tickets, and the deals are read from {@code backlogFrom} at the
     * latest, as a full scan reads them, for the tickets of the rows it settles unread.
     */
    public static AccountReconcile catchUp(long accountId, List<Hint> hints, String trigger, Instant backlogFrom) {
        return new AccountReconcile(accountId, hints, trigger, true, backlogFrom, null, null, null, null);
    }

    /** A reconcile that names no ticket (the ops page's: trigger {@code manual}). */
    public static AccountReconcile asked(long accountId, String trigger) {
        return forDeliveries(accountId, List.of(), trigger);
    }

    /** One account of a full reconcile: its deals are scanned too. */
    public static AccountReconcile fullScan(long accountId, String trigger) {
        return new AccountReconcile(accountId, List.of(), trigger, true, null, null, null, null, null);
    }

    AccountReconcile askedAt(Instant at) {
        return new AccountReconcile(accountId, hints, trigger, fullScan, backlogFrom, at, positions, dealsQuery, deals);
    }

    AccountReconcile withPositions(List<ApiPosition> listed, DealsQuery planned) {
        return new AccountReconcile(accountId, hints, trigger, fullScan, backlogFrom, snapshotAt, listed, planned,
                deals);
    }

    AccountReconcile withDeals(List<ApiDeal> answered) {
        return new AccountReconcile(accountId, hints, trigger, fullScan, backlogFrom, snapshotAt, positions, dealsQuery,
                answered);
    }

    /** {@code GET /v1/accounts/{id}/positions}, the first call. */
    public String positionsPath() {
        return API.positionsPath(accountId);
    }

    /** Whether the planned deals call is needed (only once the positions arrived). */
    public boolean dealsNeeded() {
        return dealsQuery != null && dealsQuery.needed();
    }

    /** {@code GET /v1/accounts/{id}/deals?from=..}, the window {@link #dealsQuery} planned. */
    public String dealsPath() {
        return API.dealsPath(accountId, dealsQuery.from(), dealsQuery.to());
    }
}
