package dev.metakit.inbox.ops;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;

/**
 * Operators' changes to the inbox, plain SQL (no Camel): replay stored deliveries through the worker, requeue failed
 * rows, prune old processed rows. Replay is harmless by construction: a reconcile only makes the positions table match
 * MetaKit, whatever the number of times it runs. Used by {@link InboxCommand}, and as the bean {@code inboxMaintenance}.
 */
public class InboxMaintenance {
    private static final Logger LOG = LoggerFactory.getLogger(InboxMaintenance.class);

    /** Puts rows back as never worked; a row under a live lease is left to the run that holds it (it is current). */
    private static final String REPLAY = """
            update webhook_inbox
               set processed_at = null, failed_at = null, attempts = 0, next_attempt_at = now(), last_error = null,
                   claimed_by = null, claim_token = null, claimed_until = null
             where (cast(? as bigint) is null or account_id = ?)
               and (cast(? as timestamptz) is null or received_at >= ?)
               and (cast(? as timestamptz) is null or received_at < ?)
               and (claimed_until is null or claimed_until < now())""";

    private static final String REQUEUE_FAILED = """
            update webhook_inbox set failed_at = null, attempts = 0, next_attempt_at = now()
             where failed_at is not null and processed_at is null
               and (cast(? as bigint) is null or account_id = ?)""";

    /** One bounded batch; SKIP LOCKED so pruning never waits on (or blocks) a worker. */
    private static final String PRUNE_BATCH = """
            delete from webhook_inbox where delivery_key in (
                select delivery_key from webhook_inbox
                 where processed_at is not null and failed_at is null and received_at < ?
                 limit ? for update skip locked)""";

    private DataSource dataSource;

    public InboxMaintenance() {
    }

    public InboxMaintenance(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * Replays the stored deliveries of one account ({@code null}: every account) received in {@code [from, to)}
     * (either bound may be null); the worker picks them up at its next poll. Returns how many rows.
     */
    public int replay(Long account, Instant from, Instant to) throws SQLException {
        if (from != null && to != null && !from.isBefore(to)) {
            throw new IllegalArgumentException("replay: --from must be before --to");
        }
        int n;
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(REPLAY)) {
            setLong(ps, 1, account);
            setLong(ps, 2, account);
            setInstant(ps, 3, from);
            setInstant(ps, 4, from);
            setInstant(ps, 5, to);
            setInstant(ps, 6, to);
            n = ps.executeUpdate();
        }
        LOG.info("Replay: {} stored deliveries queued again (account {}, received from {} to {})", n,
                account == null ? "any" : account, from == null ? "the first" : from, to == null ? "now" : to);
        return n;
    }

    /** For a route or the ops page: every stored delivery of one account. */
    public int replayAccount(long account) throws SQLException {
        return replay(account, null, null);
    }

    /** Puts failed rows (of one account, or all when {@code null}) back in the queue with fresh attempts. */
    public int requeueFailed(Long account) throws SQLException {
        int n;
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(REQUEUE_FAILED)) {
            setLong(ps, 1, account);
            setLong(ps, 2, account);
            n = ps.executeUpdate();
        }
        LOG.info("Requeued {} failed inbox rows (account {})", n, account == null ? "any" : account);
        return n;
    }

    /** Puts one failed row back in the queue; returns 1, or 0 when no failed row has this key. */
    public int requeueFailedRow(String deliveryKey) throws SQLException {
        int n;
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("""
                update webhook_inbox set failed_at = null, attempts = 0, next_attempt_at = now()
                 where delivery_key = ? and failed_at is not null and processed_at is null""")) {
            ps.setString(1, deliveryKey);
            n = ps.executeUpdate();
        }
        LOG.info("Requeued failed inbox row {}: {}", deliveryKey, n == 1 ? "done" : "no such failed row");
        return n;
    }

    /**
     * Deletes processed rows received before {@code cutoff}, {@code batchSize} rows per statement until none is left;
     * failed and unprocessed rows are kept. Returns how many rows.
     */
    public long prune(Instant cutoff, int batchSize) throws SQLException {
        long total = 0;
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(PRUNE_BATCH)) {
            ps.setTimestamp(1, Timestamp.from(cutoff));
            ps.setInt(2, batchSize);
            int n;
            do {
                n = ps.executeUpdate();
                total += n;
            } while (n == batchSize);
        }
        return total;
    }

    public long prune(Duration retention, int batchSize) throws SQLException {
        return prune(Instant.now().minus(retention), batchSize);
    }

    private static void setLong(PreparedStatement ps, int i, Long v) throws SQLException {
        if (v == null) {
            ps.setNull(i, Types.BIGINT);
        } else {
            ps.setLong(i, v);
        }
    }

    private static void setInstant(PreparedStatement ps, int i, Instant v) throws SQLException {
        if (v == null) {
            ps.setNull(i, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            ps.setTimestamp(i, Timestamp.from(v));
        }
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }
}
