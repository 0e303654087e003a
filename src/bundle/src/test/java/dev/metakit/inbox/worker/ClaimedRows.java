package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.support.OneConnection;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/** Inbox rows on the test database and a live boot claiming them: what the worker's parts are given. */
final class ClaimedRows {
    static final InboxClaims CLAIMS = new InboxClaims(TestDatabase.dataSource());

    private ClaimedRows() {
    }

    /** A boot that has beaten (its claims are live) and whose liveness beats again on request. */
    static InstanceLiveness beatingBoot(String instanceId) throws SQLException {
        InstanceLiveness liveness = new InstanceLiveness(TestDatabase.dataSource(), Claimant.newBoot(instanceId),
                Duration.ofSeconds(2));
        liveness.beat();
        return liveness;
    }

    /** A pending row as the ingest stores it ({@code account} may be null). */
    static void pending(String key, String event, Long account, String body) throws SQLException {
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "insert into webhook_inbox (delivery_key, event, account_id, body) values (?, ?, ?, ?)")) {
            ps.setString(1, key);
            ps.setString(2, event);
            ps.setObject(3, account);
            ps.setString(4, body);
            ps.executeUpdate();
        }
    }

    /** A pending trade event of {@code account} about {@code ticket}. */
    static void trade(String key, long account, long ticket) throws SQLException {
        pending(key, "position.modified", account, "{\"event\":\"position.modified\",\"account_id\":" + account
                + ",\"data\":{\"ticket\":" + ticket + "}}");
    }

    /** {@code count} pending trade-event rows of {@code account} ({@code prefix} + n), stored {@code ageSeconds} ago. */
    static void tradeRows(String prefix, long account, int count, int ageSeconds) throws SQLException {
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
                "insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                        + " select ? || n, 'position.modified', ?, ?, now() - ? * interval '1 second'"
                        + " from generate_series(1, ?) n")) {
            ps.setString(1, prefix);
            ps.setLong(2, account);
            ps.setString(3, new String(TestEvents.event("position.modified", account, 100 + account),
                    StandardCharsets.UTF_8));
            ps.setInt(4, ageSeconds);
            ps.setInt(5, count);
            ps.executeUpdate();
        }
    }

    /** What a call answered, and the rows of the inbox's partitions it read. */
    record Read<T>(T answer, long rows) {
    }

    /** A call on the database that may throw, given a DataSource. */
    interface OnDatabase<T> {
        T call(DataSource dataSource) throws SQLException;
    }

    /** Runs {@code call} on one connection in a transaction rolled back after: its answer and the rows it read. */
    static <T> Read<T> readingRows(OnDatabase<T> call) throws SQLException {
        try (Connection c = TestDatabase.dataSource().getConnection()) {
            c.setAutoCommit(false);
            T answer = call.call(new OneConnection(c).dataSource());
            long rows = inboxRowsRead(c);
            c.rollback();
            return new Read<>(answer, rows);
        }
    }

    /**
     * Rows of the inbox's partitions read so far in the transaction of {@code c} (heap rows a scan read or an index
     * scan fetched): what a statement on the inbox cost in rows.
     */
    static long inboxRowsRead(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("select coalesce(sum(coalesce(t.seq_tup_read, 0)"
                + " + coalesce(t.idx_tup_fetch, 0)), 0) from pg_stat_xact_user_tables t"
                + " join pg_inherits i on i.inhrelid = t.relid where i.inhparent = 'webhook_inbox'::regclass");
             java.sql.ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Every due row, claimed by {@code boot} under {@code lease}. */
    static List<InboxRow> claimAll(Claimant boot, Duration lease) throws SQLException {
        return CLAIMS.claim(boot, 1000, 10_000, lease);
    }

    /** The delivery keys of an account's work, as the tests name the rows. */
    static List<String> deliveryKeys(AccountWork work) {
        return work.keys().stream().map(InboxKey::deliveryKey).toList();
    }
}
