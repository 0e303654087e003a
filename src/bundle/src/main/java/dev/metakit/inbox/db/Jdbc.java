package dev.metakit.inbox.db;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/** Parameters and columns that may be null, as the tables' classes bind and read them. */
public final class Jdbc {
    private Jdbc() {
    }

    public static void setLong(PreparedStatement s, int i, Long v) throws SQLException {
        if (v == null) {
            s.setNull(i, Types.BIGINT);
        } else {
            s.setLong(i, v);
        }
    }

    public static void setDecimal(PreparedStatement s, int i, BigDecimal v) throws SQLException {
        if (v == null) {
            s.setNull(i, Types.NUMERIC);
        } else {
            s.setBigDecimal(i, v);
        }
    }

    /** As a {@code timestamptz} in UTC. */
    public static void setInstant(PreparedStatement s, int i, Instant v) throws SQLException {
        if (v == null) {
            s.setNull(i, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            s.setObject(i, OffsetDateTime.ofInstant(v, ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE);
        }
    }

    public static Instant getInstant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    /** A duration as a PostgreSQL {@code interval} literal, for a {@code ?::interval} parameter. */
    public static String interval(Duration d) {
        return d.toMillis() + " milliseconds";
    }

    /** Statements that run in one transaction ({@link #inTransaction}). */
    @FunctionalInterface
    public interface Transaction<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction on {@code c}: committed when it returns, rolled back when it throws; the
     * connection's auto-commit is as it was afterwards either way (it goes back to a pool).
     */
    public static <T> T inTransaction(Connection c, Transaction<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            T result = work.run(c);
            c.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /** Runs a bounded delete until a run deletes fewer than {@code batchSize} rows. Returns how many in all. */
    public static long deleteInBatches(PreparedStatement s, int batchSize) throws SQLException {
        return deleteInBatches(s, batchSize, soFar -> { });
    }

    /** Told the rows done so far after each batch of a long piece of work. */
    @FunctionalInterface
    public interface Progress {
        void done(long soFar);
    }

    /** {@link #deleteInBatches(PreparedStatement, int)}, telling {@code progress} after each batch. */
    public static long deleteInBatches(PreparedStatement s, int batchSize, Progress progress) throws SQLException {
        long total = 0;
        int n;
        do {
            n = s.executeUpdate();
            total += n;
            progress.done(total);
        } while (n == batchSize);
        return total;
    }

    /** Whether a table of that name is on the connection's search_path. */
    public static boolean relationExists(Connection c, String name) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("select to_regclass(?) is not null")) {
            s.setString(1, name);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getBoolean(1);
            }
        }
    }
}
