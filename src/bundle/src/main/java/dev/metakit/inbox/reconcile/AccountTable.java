package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.db.Jdbc;
import dev.metakit.inbox.db.Rows;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/** The SQL of the {@code accounts} table: the accounts the periodic reconcile covers and each one's last reconcile. */
public final class AccountTable {
    /** Each account with its open positions and its last feed change, for the ops page (at most 500 accounts). */
    private static final String OVERVIEW = """
            select a.account_id as "accountId", a.last_reconciled_at as "lastReconciledAt",
                   a.last_reconcile_error as "lastError",
                   (select count(*) from positions p where p.account_id = a.account_id and p.status = 'open')::int
                       as "openPositions",
                   f.seq as "lastChangeSeq", f.kind as "lastChangeKind", f.ticket as "lastChangeTicket",
                   f.published_at as "lastChangePublishedAt"
              from accounts a
              left join lateral (select seq, kind, ticket, published_at from position_changes pc
                                  where pc.account_id = a.account_id order by seq desc limit 1) f on true
             order by a.account_id limit 500""";

    private AccountTable() {
    }

    /**
     * Locks the account's row until {@code c}'s transaction ends (creating it if new): a reconcile of one account at a
     * time. Returns the snapshot time of its last applied reconcile (null: none).
     */
    static Instant lock(Connection c, long accountId) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(
                "insert into accounts (account_id) values (?) on conflict on constraint accounts_pk do nothing")) {
            s.setLong(1, accountId);
            s.executeUpdate();
        }
        try (PreparedStatement s = c.prepareStatement(
                "select last_snapshot_at from accounts where account_id = ? for update")) {
            s.setLong(1, accountId);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return Jdbc.getInstant(rs, "last_snapshot_at");
            }
        }
    }

    /** The reconcile of {@code snapshot} committed with {@code c}'s transaction: its error, if any, is cleared. */
    static void markReconciled(Connection c, long accountId, Instant snapshot) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("update accounts set last_snapshot_at = ?,"
                + " last_reconciled_at = now(), last_reconcile_error = null where account_id = ?")) {
            Jdbc.setInstant(s, 1, snapshot);
            s.setLong(2, accountId);
            s.executeUpdate();
        }
    }

    static void recordFailure(DataSource dataSource, long accountId, String text) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement s = c.prepareStatement(
                "insert into accounts (account_id, last_reconcile_error) values (?, ?)"
                        + " on conflict on constraint accounts_pk do update set last_reconcile_error = excluded.last_reconcile_error")) {
            s.setLong(1, accountId);
            s.setString(2, text);
            s.executeUpdate();
        }
    }

    /** Adds the accounts not known yet; known ones are left as they are. */
    static void register(DataSource dataSource, Collection<Long> accountIds) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement s = c.prepareStatement(
                "insert into accounts (account_id) select unnest(?::bigint[]) on conflict on constraint accounts_pk do nothing")) {
            s.setArray(1, c.createArrayOf("bigint", new TreeSet<>(accountIds).toArray()));
            s.executeUpdate();
        }
    }

    /** Every known account, in id order. */
    static List<Long> known(DataSource dataSource) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("select account_id from accounts order by account_id");
             ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                ids.add(rs.getLong(1));
            }
        }
        return ids;
    }

    public static List<Map<String, Object>> overview(DataSource dataSource) throws SQLException {
        return Rows.read(dataSource, OVERVIEW);
    }
}
