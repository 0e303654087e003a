package dev.metakit.inbox.conformance;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** What the inbox table holds, read over the test's own connection. */
final class InboxRows {
    /** the inbox table in the bundle's schema: every runtime under test runs with the default metakit.database.schema */
    private static final String INBOX = "metakit.webhook_inbox";

    private InboxRows() {
    }

    /** How many rows the inbox holds under {@code deliveryKey} (0 or 1). */
    static int count(DataSource db, String deliveryKey) throws SQLException {
        return first(db, Integer.class, "select count(*)::int from " + INBOX + " where delivery_key = ?", deliveryKey);
    }

    /** The stored event of the row under {@code deliveryKey}, or null when there is none. */
    static String event(DataSource db, String deliveryKey) throws SQLException {
        return first(db, String.class, "select event from " + INBOX + " where delivery_key = ?", deliveryKey);
    }

    /** The trace context stored with the row under {@code deliveryKey} (its ingest span's), or null. */
    static String traceParent(DataSource db, String deliveryKey) throws SQLException {
        return first(db, String.class, "select trace_parent from " + INBOX + " where delivery_key = ?", deliveryKey);
    }

    /** The account's rows a reconcile has still to serve (neither processed nor given up). */
    static long waiting(DataSource db, long accountId) throws SQLException {
        return first(db, Long.class, "select count(*) from " + INBOX + " where account_id = ?"
                + " and processed_at is null and failed_at is null", accountId);
    }

    /**
     * The trace context stored with the first change of the account's position {@code ticket} once the feed has
     * published it (the change of the reconcile that first saw the position), or null until then.
     */
    static String publishedChangeTraceParent(DataSource db, long accountId, long ticket) throws SQLException {
        return first(db, String.class, "select trace_parent from (select trace_parent, published_at"
                + " from metakit.position_changes where account_id = ? and ticket = ? order by seq limit 1) earliest"
                + " where published_at is not null", accountId, ticket);
    }

    /** Every row the inbox holds. */
    static long all(DataSource db) throws SQLException {
        return first(db, Long.class, "select count(*) from " + INBOX);
    }

    /** The first column of the query's first row, or null when it has none. */
    private static <T> T first(DataSource db, Class<T> type, String sql, Object... parameters) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                s.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getObject(1, type) : null;
            }
        }
    }
}
