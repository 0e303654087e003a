package dev.metakit.inbox.inbox;

import javax.sql.DataSource;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Set;

/**
 * The ingest's statements on the inbox: a delivery goes in with its key, never a bare key, and a key already stored
 * is left as it is (the redelivery of a delivery is a duplicate, not an error). The inbox is partitioned by the
 * signature's t ({@code signed_at}, V12), the same for every retry of a delivery, so the key with its t is the
 * dedupe key and a retry meets its row in whichever partition it is, the kept one included.
 */
public class InboxIntake {
    private static final String INSERT_BATCH = """
            insert into webhook_inbox (delivery_key, event, account_id, body, body_raw, signed_at, trace_parent)
            select k, e, a, b, r, to_timestamp(t), p
              from unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::bytea[], ?::bigint[], ?::text[])
                   as d(k, e, a, b, r, t, p)
            on conflict (delivery_key, signed_at) do nothing
            returning delivery_key""";

    private final DataSource dataSource;

    public InboxIntake(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Whether a delivery with this key is stored. */
    public boolean contains(String deliveryKey) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("select 1 from webhook_inbox where delivery_key = ?")) {
            ps.setString(1, deliveryKey);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /**
     * Stores new deliveries in one statement on {@code c} (the ingest's group commit), the arrays index-aligned, one
     * entry per key, {@code signedAt} in unix seconds (a trace parent null when tracing is off); a key already stored
     * is left as it is. Returns the keys this statement stored. A time no partition covers fails the statement
     * (nothing is stored).
     */
    public static Set<String> insert(Connection c, long timeoutMillis, String[] keys, String[] events, Long[] accounts,
                                     String[] texts, byte[][] raws, Long[] signedAt, String[] traceParents)
            throws SQLException {
        Set<String> inserted = new HashSet<>(keys.length * 2);
        try (PreparedStatement ps = c.prepareStatement(INSERT_BATCH)) {
            queryTimeout(ps, timeoutMillis);
            Array[] arrays = {c.createArrayOf("text", keys), c.createArrayOf("text", events),
                    c.createArrayOf("bigint", accounts), c.createArrayOf("text", texts),
                    c.createArrayOf("bytea", raws), c.createArrayOf("bigint", signedAt),
                    c.createArrayOf("text", traceParents)};
            for (int a = 0; a < arrays.length; a++) {
                ps.setArray(a + 1, arrays[a]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    inserted.add(rs.getString(1));
                }
            }
        }
        return inserted;
    }

    /**
     * Cancels the statement after {@code millis}: to the millisecond on PostgreSQL's driver (a statement past its
     * deadline commits nothing, however close the deadline), else in whole seconds, rounded up.
     */
    private static void queryTimeout(PreparedStatement ps, long millis) throws SQLException {
        if (ps.isWrapperFor(org.postgresql.jdbc.PgStatement.class)) {
            ps.unwrap(org.postgresql.jdbc.PgStatement.class).setQueryTimeoutMs(Math.max(1, millis));
        } else {
            ps.setQueryTimeout((int) Math.max(1, (millis + 999) / 1000));
        }
    }
}
