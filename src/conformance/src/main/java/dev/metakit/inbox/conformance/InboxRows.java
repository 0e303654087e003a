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
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("select count(*) from " + INBOX + " where delivery_key = ?")) {
            s.setString(1, deliveryKey);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** The stored event of the row under {@code deliveryKey}, or null when there is none. */
    static String event(DataSource db, String deliveryKey) throws SQLException {
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("select event from " + INBOX + " where delivery_key = ?")) {
            s.setString(1, deliveryKey);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** The trace context stored with the row under {@code deliveryKey} (its ingest span's), or null. */
    static String traceParent(DataSource db, String deliveryKey) throws SQLException {
        return text(db, "select trace_parent from " + INBOX + " where delivery_key = ?", deliveryKey);
    }

    /** The account's rows a reconcile has still to serve (neither processed nor given up). */
    static long waiting(DataSource db, long accountId) throws SQLException {
        return Long.parseLong(text(db, "select count(*) from " + INBOX + " where account_id = ?"
                + " and processed_at is null and failed_at is null", accountId));
    }

    /**
     * The trace context stored with the first change of the account's position {@code ticket} once the feed has
     * published it (the change of the reconcile that first saw the position), or null until then.
     */
    static String publishedChangeTraceParent(DataSource db, long accountId, long ticket) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(
                "select trace_parent, published_at from metakit.position_changes where account_id = ? and ticket = ?"
                        + " order by seq limit 1")) {
            s.setLong(1, accountId);
            s.setLong(2, ticket);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() && rs.getTimestamp(2) != null ? rs.getString(1) : null;
            }
        }
    }

    private static String text(DataSource db, String sql, Object parameter) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement(sql)) {
            s.setObject(1, parameter);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** Every row the inbox holds. */
    static long all(DataSource db) throws SQLException {
        try (Connection c = db.getConnection();
             ResultSet rs = c.createStatement().executeQuery("select count(*) from " + INBOX)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
