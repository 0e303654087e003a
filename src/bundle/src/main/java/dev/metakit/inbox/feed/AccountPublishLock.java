package dev.metakit.inbox.feed;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * One publisher per account across instances: a PostgreSQL session-level advisory lock, held by the connection the
 * publisher uses for the account while it sends. No transaction stays open while the outlet is slow, and an instance
 * that dies (kill -9 included) loses its locks with its connections.
 *
 * <p>The key is the two-int form (a key space apart from the single-bigint locks the bundle takes elsewhere):
 * {@link #NAMESPACE} and the account id folded to 32 bits. Two accounts whose ids fold alike share a lock, which
 * only makes one of them wait for the next poll; ids below 2^31 fold to themselves.
 */
final class AccountPublishLock {
    /** "MKFD" */
    static final int NAMESPACE = 0x4d4b_4644;

    private AccountPublishLock() {
    }

    static boolean tryLock(Connection c, long accountId) throws SQLException {
        return call(c, "select pg_try_advisory_lock(?, ?)", accountId);
    }

    static boolean unlock(Connection c, long accountId) throws SQLException {
        return call(c, "select pg_advisory_unlock(?, ?)", accountId);
    }

    private static boolean call(Connection c, String sql, long accountId) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setInt(1, NAMESPACE);
            s.setInt(2, Long.hashCode(accountId));
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
