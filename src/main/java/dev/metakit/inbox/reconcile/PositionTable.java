package dev.metakit.inbox.reconcile;

import java.math.BigDecimal;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
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
                            rs.getBigDecimal("profit"), rs.getBigDecimal("swap"), instant(rs, "opened_at"),
                            instant(rs, "closed_at"), (Long) rs.getObject("close_deal_ticket"),
                            rs.getBigDecimal("close_price"), rs.getBigDecimal("close_profit"));
                    rows.put(row.ticket(), new StoredRow(row, instant(rs, "updated_at")));
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
            decimal(s, i++, r.volume());
            decimal(s, i++, r.priceOpen());
            decimal(s, i++, r.sl());
            decimal(s, i++, r.tp());
            decimal(s, i++, r.profit());
            decimal(s, i++, r.swap());
            timestamp(s, i++, r.openedAt());
            timestamp(s, i++, r.closedAt());
            if (r.closeDealTicket() == null) {
                s.setNull(i++, Types.BIGINT);
            } else {
                s.setLong(i++, r.closeDealTicket());
            }
            decimal(s, i++, r.closePrice());
            decimal(s, i, r.closeProfit());
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

    private static void decimal(PreparedStatement s, int i, BigDecimal v) throws SQLException {
        if (v == null) {
            s.setNull(i, Types.NUMERIC);
        } else {
            s.setBigDecimal(i, v);
        }
    }

    static void timestamp(PreparedStatement s, int i, Instant v) throws SQLException {
        if (v == null) {
            s.setNull(i, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            s.setObject(i, OffsetDateTime.ofInstant(v, ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE);
        }
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }
}
