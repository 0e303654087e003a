package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.db.Jdbc;
import dev.metakit.inbox.metakit.ApiDeal;
import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.reconcile.PositionTable.StoredRow;
import dev.metakit.inbox.reconcile.PositionTable.Write;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Makes one account's {@code positions} rows match a MetaKit snapshot. A route calls it in two steps around its HTTP
 * calls: take {@code snapshotAt}, {@code GET positions}, {@link #planDeals}, {@code GET deals} only if needed, then
 * {@link #apply} in one transaction.
 *
 * <p>Rules that are decisions rather than arithmetic:
 * <ul>
 * <li>Only the positions list sets a row open. Hints never do, so a late {@code position.opened} cannot reopen a
 * closed row; a closed row is reopened only when the API lists the ticket again in a snapshot taken after its
 * close deal executed (a close inferred from a partial deal while the list lagged).</li>
 * <li>A position no longer listed is closed only once its deals close all the volume they opened (or reverse it);
 * until then it is {@code closing}, and the next reconcile asks for its deals again.</li>
 * <li>A {@code position.closed} for a ticket never seen and not yet in the deals leaves a {@code closing} row with
 * only its ticket, so that the close is not forgotten once the delivery is marked processed.</li>
 * <li>Snapshots apply in order: one taken before the last applied one changes nothing.</li>
 * </ul>
 */
public class AccountReconciler {

    /** Deals can be stamped a little before the position's own time: widen the window by this much. */
    static final Duration OPEN_MARGIN = Duration.ofMinutes(1);
    public static final Duration DEFAULT_HINT_LOOKBACK = Duration.ofDays(1);

    private static final int MAX_ERROR_LENGTH = 500;
    private static final Pattern BEARER = Pattern.compile("(?i)bearer\\s+\\S+");

    private final DataSource dataSource;
    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong changesWritten = new AtomicLong();
    private final Duration hintLookback;
    private final Clock clock;

    public AccountReconciler(DataSource dataSource) {
        this(dataSource, DEFAULT_HINT_LOOKBACK);
    }

    /** @param hintLookback how far before a hint's {@code created_at} the deals of a ticket never seen are sought */
    public AccountReconciler(DataSource dataSource, Duration hintLookback) {
        this(dataSource, hintLookback, Clock.systemUTC());
    }

    public AccountReconciler(DataSource dataSource, Duration hintLookback, Clock clock) {
        if (hintLookback == null || hintLookback.isNegative()) {
            throw new IllegalArgumentException("hint lookback must be a non-negative duration");
        }
        this.dataSource = dataSource;
        this.hintLookback = hintLookback;
        this.clock = clock;
    }

    /**
     * Whether {@code GET deals} is needed: for rows open or closing that {@code openNow} does not list (window from
     * their open time), and for hinted tickets that neither the table nor {@code openNow} has (window from the
     * hint's time minus the lookback). Not needed when nothing vanished, so a steady reconcile is one API call.
     */
    public DealsQuery planDeals(long accountId, List<ApiPosition> openNow, Collection<Hint> hints) {
        Set<Long> listed = tickets(openNow);
        Set<Long> hinted = new HashSet<>();
        for (Hint h : hints) {
            hinted.add(h.ticket());
        }
        Map<Long, StoredRow> rows;
        try (Connection c = dataSource.getConnection()) {
            rows = PositionTable.load(c, accountId, hinted);
        } catch (SQLException e) {
            throw new IllegalStateException("could not read positions of account " + accountId, e);
        }
        Instant from = null;
        Set<Long> why = new TreeSet<>();
        for (StoredRow stored : rows.values()) {
            PositionRow r = stored.row();
            if (!r.isClosed() && !listed.contains(r.ticket())) {
                // a row without an open time (the API gave none, or a hint-only placeholder): from when it was written
                Instant anchor = r.openedAt() != null ? r.openedAt().minus(OPEN_MARGIN)
                        : stored.updatedAt().minus(hintLookback);
                from = earliest(from, anchor);
                why.add(r.ticket());
            }
        }
        for (Hint h : hints) {
            if (!rows.containsKey(h.ticket()) && !listed.contains(h.ticket())) {
                Instant at = h.createdAt() != null ? h.createdAt() : clock.instant();
                from = earliest(from, at.minus(hintLookback));
                why.add(h.ticket());
            }
        }
        return why.isEmpty() ? DealsQuery.notNeeded() : DealsQuery.from(from, why);
    }

    /** {@link #apply(long, Instant, List, List, Collection, String)} for a reconcile a delivery asked for. */
    public ReconcileResult apply(long accountId, Instant snapshotAt, List<ApiPosition> openNow, List<ApiDeal> deals,
                                 Collection<Hint> hints) {
        return apply(accountId, snapshotAt, openNow, deals, hints, "event");
    }

    /**
     * Applies one snapshot in one transaction, serialised per account by the {@code accounts} row lock. Each real
     * transition of a row is also written to the change feed's outbox in the same transaction ({@link ChangeOutbox}).
     *
     * @param snapshotAt when the positions list was requested (taken before the request)
     * @param deals      the deals {@link #planDeals} asked for, or empty when it said none were needed
     * @param trigger    what started the reconcile ({@code event}, {@code periodic}, {@code status-watch},
     *                   {@code replay}, {@code manual}): the {@code source} of the changes it finds
     */
    public ReconcileResult apply(long accountId, Instant snapshotAt, List<ApiPosition> openNow, List<ApiDeal> deals,
                                 Collection<Hint> hints, String trigger) {
        Objects.requireNonNull(snapshotAt, "snapshotAt");
        String source = ChangeOutbox.source(trigger);
        // timestamptz keeps microseconds: compare what is stored with what would be stored
        Instant snapshot = snapshotAt.truncatedTo(ChronoUnit.MICROS);
        try (Connection c = dataSource.getConnection()) {
            Changes changes = new Changes(c, accountId, source);
            ReconcileResult result = Jdbc.inTransaction(c,
                    tx -> applyLocked(tx, accountId, snapshot, openNow, deals, hints, changes));
            applied.incrementAndGet();
            changesWritten.addAndGet(changes.written);
            return result;
        } catch (SQLException e) {
            throw new IllegalStateException("could not reconcile account " + accountId, e);
        }
    }

    /** The outbox writes of one reconcile transaction. */
    private static final class Changes {
        private final Connection c;
        private final long accountId;
        private final String source;
        private int written;

        Changes(Connection c, long accountId, String source) {
            this.c = c;
            this.accountId = accountId;
            this.source = source;
        }

        /** After an upsert that wrote the row: the transition from {@code before} (null: a new row). */
        void record(PositionRow before, PositionRow after) throws SQLException {
            if (ChangeOutbox.record(c, accountId, before, after, source)) {
                written++;
            }
        }
    }

    private ReconcileResult applyLocked(Connection c, long accountId, Instant snapshot, List<ApiPosition> openNow,
                                        List<ApiDeal> deals, Collection<Hint> hints, Changes changes)
            throws SQLException {
        Instant last = AccountTable.lock(c, accountId);
        if (last != null && last.isAfter(snapshot)) {
            return ReconcileResult.stale(accountId);
        }
        Map<Long, ApiPosition> listed = new LinkedHashMap<>();
        for (ApiPosition p : openNow) {
            listed.put(p.ticket(), p);
        }
        Map<Long, List<Hint>> hinted = new LinkedHashMap<>();
        for (Hint h : hints) {
            hinted.computeIfAbsent(h.ticket(), t -> new ArrayList<>()).add(h);
        }
        Set<Long> wanted = new HashSet<>(listed.keySet());
        wanted.addAll(hinted.keySet());
        Map<Long, StoredRow> rows = PositionTable.load(c, accountId, wanted);

        int opened = 0;
        int updated = 0;
        int closed = 0;
        int closing = 0;
        for (ApiPosition p : listed.values()) {
            StoredRow stored = rows.get(p.ticket());
            if (stored != null && stored.row().isClosed() && stored.row().closedAt() != null
                    && !snapshot.isAfter(stored.row().closedAt())) {
                continue;
            }
            PositionRow next = PositionRow.open(p);
            Write w = PositionTable.upsert(c, accountId, next);
            opened += w == Write.INSERTED ? 1 : 0;
            updated += w == Write.UPDATED ? 1 : 0;
            if (w != Write.UNCHANGED) {
                changes.record(stored == null ? null : stored.row(), next);
            }
        }
        for (StoredRow stored : rows.values()) {
            PositionRow r = stored.row();
            if (r.isClosed() || listed.containsKey(r.ticket())) {
                continue;
            }
            Closure closure = Closure.of(r.ticket(), deals);
            PositionRow next = closure == null ? r.withStatus(PositionRow.CLOSING)
                    : closure.complete() ? r.closed(closure) : r.closing(closure);
            if (PositionTable.upsert(c, accountId, next) != Write.UNCHANGED) {
                changes.record(r, next);
                if (next.isClosed()) {
                    closed++;
                } else {
                    closing++;
                }
            }
        }
        for (Map.Entry<Long, List<Hint>> e : hinted.entrySet()) {
            long ticket = e.getKey();
            if (rows.containsKey(ticket) || listed.containsKey(ticket)) {
                continue;
            }
            Closure closure = Closure.of(ticket, deals);
            PositionRow blank = PositionRow.placeholder(ticket);
            PositionRow next;
            if (closure != null) {
                next = closure.complete() ? blank.closed(closure) : blank.closing(closure);
            } else if (e.getValue().stream().anyMatch(Hint::saysClosed)) {
                next = blank;
            } else {
                continue; // an open or modify for a ticket nowhere to be seen: nothing to record yet
            }
            if (PositionTable.upsert(c, accountId, next) != Write.UNCHANGED) {
                changes.record(null, next); // not in rows, which holds every hinted ticket the table has
                if (next.isClosed()) {
                    closed++;
                } else {
                    closing++;
                }
            }
        }
        AccountTable.markReconciled(c, accountId, snapshot);
        return new ReconcileResult(accountId, false, opened, updated, closed, closing);
    }

    /** Changes written to the feed's outbox (and committed) by this instance. */
    public long changesWritten() {
        return changesWritten.get();
    }

    /** Snapshots committed by {@link #apply} since this instance started (stale ones included), for progress lines. */
    public long reconciles() {
        return applied.get();
    }

    /**
     * The positions that {@code deals} close (or reverse) and that neither the table nor {@code openNow} has: each as
     * a {@code position.closed} hint at its last closing deal's time, so that {@link #apply} inserts the closed row.
     * This is what finds a position opened and closed while both its deliveries were lost.
     */
    public List<Hint> unrecordedClosures(long accountId, List<ApiPosition> openNow, List<ApiDeal> deals) {
        Set<Long> listed = tickets(openNow);
        Map<Long, Instant> lastClose = new LinkedHashMap<>();
        for (ApiDeal d : deals) {
            if (d.isClosing() && !listed.contains(d.positionId())) {
                lastClose.merge(d.positionId(), d.time() == null ? clock.instant() : d.time(),
                        (a, b) -> a.isAfter(b) ? a : b);
            }
        }
        if (lastClose.isEmpty()) {
            return List.of();
        }
        Set<Long> known;
        try (Connection c = dataSource.getConnection()) {
            known = PositionTable.recorded(c, accountId, lastClose.keySet());
        } catch (SQLException e) {
            throw new IllegalStateException("could not read positions of account " + accountId, e);
        }
        List<Hint> hints = new ArrayList<>();
        lastClose.forEach((ticket, at) -> {
            if (!known.contains(ticket)) {
                hints.add(new Hint(ticket, Hint.POSITION_CLOSED, at));
            }
        });
        return hints;
    }

    /** Records why the account's last reconcile failed; a bearer token in the text is masked, the text shortened. */
    public void recordFailure(long accountId, String error) {
        String text = error == null || error.isBlank() ? "reconcile failed" : BEARER.matcher(error).replaceAll("Bearer ***");
        if (text.length() > MAX_ERROR_LENGTH) {
            text = text.substring(0, MAX_ERROR_LENGTH) + "…";
        }
        try {
            AccountTable.recordFailure(dataSource, accountId, text);
        } catch (SQLException e) {
            throw new IllegalStateException("could not record the failure of account " + accountId, e);
        }
    }

    /** Makes these accounts known to the periodic reconcile; already known ones are left as they are. */
    public void registerAccounts(Collection<Long> accountIds) {
        if (accountIds.isEmpty()) {
            return;
        }
        try {
            AccountTable.register(dataSource, accountIds);
        } catch (SQLException e) {
            throw new IllegalStateException("could not register accounts", e);
        }
    }

    /** Every account the periodic reconcile covers, in id order. */
    public List<Long> knownAccounts() {
        try {
            return AccountTable.known(dataSource);
        } catch (SQLException e) {
            throw new IllegalStateException("could not list accounts", e);
        }
    }

    private static Set<Long> tickets(List<ApiPosition> positions) {
        Set<Long> out = new HashSet<>();
        for (ApiPosition p : positions) {
            out.add(p.ticket());
        }
        return out;
    }

    private static Instant earliest(Instant a, Instant b) {
        return a == null || b.isBefore(a) ? b : a;
    }
}
