package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.feed.ChangeStore;
import dev.metakit.inbox.feed.FeedChange;
import dev.metakit.inbox.trace.TraceParent;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Decides what the change feed's outbox ({@code position_changes}, {@link ChangeStore}) gets, and writes it on the reconcile's connection, inside its transaction:
 * a change commits with the positions row it describes, or neither does.
 *
 * <p>The feed follows the position, not the market: the floating {@code profit} and {@code swap} of an open position
 * are not feed fields, so a reconcile that only moved them writes no change.
 */
final class ChangeOutbox {

    /** The {@code source} values the table accepts; the reconcile's trigger names one of them. */
    static final Set<String> SOURCES = Set.of("event", "periodic", "status-watch", "replay", "manual");

    private record Field(String name, Function<PositionRow, Object> value) {
    }

    // the feed's field names, as the published JSON and the changed column spell them
    private static final List<Field> FIELDS = List.of(
            new Field("status", PositionRow::status),
            new Field("symbol", PositionRow::symbol),
            new Field("type", PositionRow::type),
            new Field("volume", PositionRow::volume),
            new Field("priceOpen", PositionRow::priceOpen),
            new Field("openedAt", PositionRow::openedAt),
            new Field("sl", PositionRow::sl),
            new Field("tp", PositionRow::tp),
            new Field("closedAt", PositionRow::closedAt),
            new Field("closeDealTicket", PositionRow::closeDealTicket),
            new Field("closePrice", PositionRow::closePrice),
            new Field("profit", r -> r.isClosed() ? r.closeProfit() : null));

    private ChangeOutbox() {
    }

    /** The trigger of a reconcile as a {@code source}: unknown triggers (a host's own) count as {@code manual}. */
    static String source(String trigger) {
        return trigger != null && SOURCES.contains(trigger) ? trigger : "manual";
    }

    /**
     * Records the transition of one row from {@code before} (null: the row did not exist) to {@code after}, if a feed
     * field changed. Returns whether a change was written.
     */
    static boolean record(Connection c, long accountId, PositionRow before, PositionRow after, String source)
            throws SQLException {
        List<String> changed = changedFields(before, after);
        if (changed.isEmpty()) {
            return false;
        }
        // the row's close profit is the change's profit: what the feed publishes for a closed position; the span
        // current here is the reconcile's (ReconcileSteps.applyTraced), none when tracing is off
        ChangeStore.append(c, new FeedChange(0, accountId, 0, after.ticket(), kind(before, after), after.status(),
                after.symbol(), after.type(), after.volume(), after.priceOpen(), after.openedAt(), after.sl(),
                after.tp(), after.closedAt(), after.closeDealTicket(), after.closePrice(), after.closeProfit(),
                changed, source, null, TraceParent.ofCurrentSpan()));
        return true;
    }

    /** A row's status names the kind; a row that was open before and still is, was {@code modified}. */
    static String kind(PositionRow before, PositionRow after) {
        return switch (after.status()) {
            case PositionRow.CLOSED -> "closed";
            case PositionRow.CLOSING -> "closing";
            default -> before == null ? "opened" : "modified";
        };
    }

    /** The feed fields that differ (numbers by value: 0.10 is 0.1); for a new row, every field it has. */
    static List<String> changedFields(PositionRow before, PositionRow after) {
        List<String> out = new ArrayList<>();
        for (Field f : FIELDS) {
            Object now = f.value().apply(after);
            Object was = before == null ? null : f.value().apply(before);
            if (before == null ? now != null : !same(was, now)) {
                out.add(f.name());
            }
        }
        return out;
    }

    private static boolean same(Object a, Object b) {
        if (a instanceof BigDecimal x && b instanceof BigDecimal y) {
            return x.compareTo(y) == 0;
        }
        return Objects.equals(a, b);
    }
}
