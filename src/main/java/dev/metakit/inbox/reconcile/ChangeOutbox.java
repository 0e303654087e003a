package dev.metakit.inbox.reconcile;

import java.math.BigDecimal;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Writes the change feed's outbox ({@code position_changes}) on the reconcile's connection, inside its transaction:
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

    // the upsert returns the account's next seq and holds its row locked until the reconcile commits
    private static final String NEXT_SEQ = "insert into position_change_seqs as s (account_id, last_seq) values (?, 1)"
            + " on conflict on constraint position_change_seqs_pk do update set last_seq = s.last_seq + 1"
            + " returning last_seq";

    private static final String INSERT = "insert into position_changes (account_id, seq, ticket, kind, status,"
            + " symbol, type, volume, price_open, opened_at, sl, tp, closed_at, close_deal_ticket, close_price,"
            + " close_profit, changed, source) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

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
        long seq;
        try (PreparedStatement s = c.prepareStatement(NEXT_SEQ)) {
            s.setLong(1, accountId);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                seq = rs.getLong(1);
            }
        }
        Array names = c.createArrayOf("text", changed.toArray());
        try (PreparedStatement s = c.prepareStatement(INSERT)) {
            int i = 1;
            s.setLong(i++, accountId);
            s.setLong(i++, seq);
            s.setLong(i++, after.ticket());
            s.setString(i++, kind(before, after));
            s.setString(i++, after.status());
            s.setString(i++, after.symbol());
            s.setString(i++, after.type());
            decimal(s, i++, after.volume());
            decimal(s, i++, after.priceOpen());
            PositionTable.timestamp(s, i++, after.openedAt());
            decimal(s, i++, after.sl());
            decimal(s, i++, after.tp());
            PositionTable.timestamp(s, i++, after.closedAt());
            if (after.closeDealTicket() == null) {
                s.setNull(i++, Types.BIGINT);
            } else {
                s.setLong(i++, after.closeDealTicket());
            }
            decimal(s, i++, after.closePrice());
            decimal(s, i++, after.closeProfit());
            s.setArray(i++, names);
            s.setString(i, source);
            s.executeUpdate();
        } finally {
            names.free();
        }
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

    private static void decimal(PreparedStatement s, int i, BigDecimal v) throws SQLException {
        if (v == null) {
            s.setNull(i, Types.NUMERIC);
        } else {
            s.setBigDecimal(i, v);
        }
    }
}
