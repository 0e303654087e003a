package dev.metakit.inbox.sandbox;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Compares the consumer's {@code positions} table with the sandbox's truth, account by account: every open ticket
 * must be an {@code open} row with the same volume, sl and tp; every closed ticket a {@code closed} row whose
 * {@code close_deal_ticket} is the final closing deal; no other ticket may have a row. Plain JDBC, so the default
 * run's progress line and the end-to-end tests share it.
 */
public final class Convergence {

    private Convergence() {
    }

    /**
     * @param ignored tickets left out of the comparison (the default run passes those the market touched a moment ago:
     *                their deliveries are still in flight)
     */
    public static Report check(SandboxTruth truth, DataSource dataSource, Set<Long> ignored) throws SQLException {
        List<String> differences = new ArrayList<>();
        int skipped = 0;
        int compared = 0;
        Map<Long, Map<Long, Row>> byAccount = rows(dataSource, truth.openPositions().keySet());
        for (long account : truth.openPositions().keySet()) {
            Map<Long, Row> rows = byAccount.getOrDefault(account, Map.of());
            Map<Long, Position> open = truth.openPositions(account);
            for (Position p : open.values()) {
                if (ignored.contains(p.ticket())) {
                    skipped++;
                    continue;
                }
                compared++;
                Row r = rows.get(p.ticket());
                if (r == null) {
                    differences.add(account + "/" + p.ticket() + ": open, no row");
                } else if (!"open".equals(r.status) || !same(r.volume, p.volume()) || !same(r.sl, p.sl())
                        || !same(r.tp, p.tp())) {
                    differences.add(account + "/" + p.ticket() + ": open " + p.volume().toPlainString() + " sl "
                            + p.sl().toPlainString() + " tp " + p.tp().toPlainString() + ", row " + r);
                }
            }
            for (Row r : rows.values()) {
                if (open.containsKey(r.ticket) || ignored.contains(r.ticket)) {
                    continue;
                }
                ClosedPosition closed = truth.closedPositions().get(r.ticket);
                if (closed == null || closed.accountId() != account) {
                    differences.add(account + "/" + r.ticket + ": unknown to MetaKit, row " + r);
                }
            }
        }
        for (ClosedPosition c : truth.closedPositions().values()) {
            if (ignored.contains(c.ticket())) {
                skipped++;
                continue;
            }
            compared++;
            Row r = byAccount.getOrDefault(c.accountId(), Map.of()).get(c.ticket());
            long finalDeal = c.finalDeal().ticket();
            if (r == null) {
                differences.add(c.accountId() + "/" + c.ticket() + ": closed by deal " + finalDeal + ", no row");
            } else if (!"closed".equals(r.status) || r.closeDealTicket == null || r.closeDealTicket != finalDeal) {
                differences.add(c.accountId() + "/" + c.ticket() + ": closed by deal " + finalDeal + ", row " + r);
            }
        }
        return new Report(compared, skipped, differences);
    }

    public static Report check(SandboxTruth truth, DataSource dataSource) throws SQLException {
        return check(truth, dataSource, Set.of());
    }

    /**
     * @param compared    tickets compared
     * @param skipped     tickets left out (in flight)
     * @param differences one line per ticket whose row does not match
     */
    public record Report(int compared, int skipped, List<String> differences) {
        public Report {
            differences = List.copyOf(differences);
        }

        public boolean converged() {
            return differences.isEmpty();
        }

        /** {@code converged: yes} or {@code converged: no (N positions differ)}. */
        public String summary() {
            return converged() ? "converged: yes" : "converged: no (" + differences.size() + " positions differ)";
        }
    }

    private record Row(long ticket, String status, BigDecimal volume, BigDecimal sl, BigDecimal tp,
                       Long closeDealTicket) {
        @Override
        public String toString() {
            return status + " " + plain(volume) + " sl " + plain(sl) + " tp " + plain(tp)
                    + (closeDealTicket == null ? "" : " close deal " + closeDealTicket);
        }

        private static String plain(BigDecimal v) {
            return v == null ? "-" : v.toPlainString();
        }
    }

    /** account → (ticket → row), for the given accounts, in one query. */
    private static Map<Long, Map<Long, Row>> rows(DataSource dataSource, Set<Long> accounts) throws SQLException {
        Map<Long, Map<Long, Row>> rows = new HashMap<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement s = c.prepareStatement(
                "select account_id, ticket, status, volume, sl, tp, close_deal_ticket from positions"
                        + " where account_id = any(?)")) {
            s.setArray(1, c.createArrayOf("bigint", accounts.toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    rows.computeIfAbsent(rs.getLong(1), a -> new TreeMap<>()).put(rs.getLong(2), new Row(
                            rs.getLong(2), rs.getString(3), rs.getBigDecimal(4), rs.getBigDecimal(5),
                            rs.getBigDecimal(6), (Long) rs.getObject(7)));
                }
            }
        }
        return rows;
    }

    private static boolean same(BigDecimal a, BigDecimal b) {
        return a == null ? b == null : b != null && a.compareTo(b) == 0;
    }
}
