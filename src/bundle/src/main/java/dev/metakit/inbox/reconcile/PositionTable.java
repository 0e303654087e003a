package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.db.Jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** The SQL of the {@code positions} table, on a connection the caller owns (and whose transaction it runs). */
final class PositionTable {

    /** What an upsert did. */
    enum Write { INSERTED, UPDATED, UNCHANGED }

    private static final String COLUMNS = "ticket, status, symbol, type, volume, price_open, sl, tp, profit, swap,"
            + " opened_at, closed_at, close_deal_ticket, close_price, close_profit";

    private static final String[] UPDATED = {"status", "symbol", "type", "volume", "price_open", "sl", "tp", "profit",
            "swap", "opened_at", "closed_at", "close_deal_ticket", "close_price", "close_profit"};

    // A row whose values already match is left alone, so updated_at only moves on a real change.
    private static final String UPSERT = "insert into positions as p (account_id, " + COLUMNS + ")"
            + " values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            + " on conflict on constraint positions_pk do update set "
            + String.join(", ", Arrays.stream(UPDATED).map(c -> c + " = excluded." + c).toList())
            + ", updated_at = now()"
            + " where (" + String.join(", ", Arrays.stream(UPDATED).map(c -> "p." + c).toList()) + ")"
            + " is distinct from ("
            + String.join(", ", Arrays.stream(UPDATED).map(c -> "excluded." + c).toList()) + ")"
            + " returning (xmax = 0) as inserted";

    private PositionTable() {
    }

    /** Rows of the account that are not closed, plus any row (closed or not) among {@code tickets}. */
    static Map<Long, StoredRow> load(Connection c, long accountId, Collection<Long> tickets) throws SQLException {
        Map<Long, StoredRow> rows = new LinkedHashMap<>();
        Array array = c.createArrayOf("bigint", tickets.toArray());
        try (PreparedStatement s = c.prepareStatement("select " + COLUMNS + ", updated_at from positions"
                + " where account_id = ? and (status <> 'closed' or ticket = any(?)) order by ticket")) {
            s.setLong(1, accountId);
            s.setArray(2, array);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    PositionRow row = new PositionRow(rs.getLong("ticket"), rs.getString("status"),
                            rs.getString("symbol"), rs.getString("type"), rs.getBigDecimal("volume"),
                            rs.getBigDecimal("price_open"), rs.getBigDecimal("sl"), rs.getBigDecimal("tp"),
                            rs.getBigDecimal("profit"), rs.getBigDecimal("swap"), Jdbc.getInstant(rs, "opened_at"),
                            Jdbc.getInstant(rs, "closed_at"), (Long) rs.getObject("close_deal_ticket"),
                            rs.getBigDecimal("close_price"), rs.getBigDecimal("close_profit"));
                    rows.put(row.ticket(), new StoredRow(row, Jdbc.getInstant(rs, "updated_at")));
                }
            }
        } finally {
            array.free();
        }
        return rows;
    }

    /** Which of {@code tickets} the account has a row for (in any status). */
    static Set<Long> recorded(Connection c, long accountId, Collection<Long> tickets) throws SQLException {
        Set<Long> known = new HashSet<>();
        try (PreparedStatement s = c.prepareStatement(
                "select ticket from positions where account_id = ? and ticket = any(?)")) {
            s.setLong(1, accountId);
            s.setArray(2, c.createArrayOf("bigint", tickets.toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    known.add(rs.getLong(1));
                }
            }
        }
        return known;
    }

    static Write upsert(Connection c, long accountId, PositionRow r) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(UPSERT)) {
            int i = 1;
            s.setLong(i++, accountId);
            s.setLong(i++, r.ticket());
            s.setString(i++, r.status());
            s.setString(i++, r.symbol());
            s.setString(i++, r.type());
            Jdbc.setDecimal(s, i++, r.volume());
            Jdbc.setDecimal(s, i++, r.priceOpen());
            Jdbc.setDecimal(s, i++, r.sl());
            Jdbc.setDecimal(s, i++, r.tp());
            Jdbc.setDecimal(s, i++, r.profit());
            Jdbc.setDecimal(s, i++, r.swap());
            Jdbc.setInstant(s, i++, r.openedAt());
            Jdbc.setInstant(s, i++, r.closedAt());
            Jdbc.setLong(s, i++, r.closeDealTicket());
            Jdbc.setDecimal(s, i++, r.closePrice());
            Jdbc.setDecimal(s, i, r.closeProfit());
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return Write.UNCHANGED;
                }
                return rs.getBoolean(1) ? Write.INSERTED : Write.UPDATED;
            }
        }
    }

    record StoredRow(PositionRow row, Instant updatedAt) {
    }
}
