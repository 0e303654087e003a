package dev.metakit.inbox.ops;

import dev.metakit.inbox.db.DayPartitions;
import dev.metakit.inbox.inbox.InboxAdmin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;

/**
 * Operators' changes to the inbox (no Camel): replay stored deliveries through the worker, requeue failed rows, prune
 * old processed rows, each with its log line; the statements are {@link InboxAdmin}'s. Replay is harmless by
 * construction: a reconcile only makes the positions table match MetaKit, whatever the number of times it runs. Used
 * by {@link InboxCommand}, the ops page, and a route's {@code bean:} step as the bean {@code inboxMaintenance}, e.g.
 * {@code bean:inboxMaintenance?method=replayAccount(2)} (its methods for routes are not overloaded, so a step names
 * one without its parameter types).
 */
public class InboxMaintenance {
    private static final Logger LOG = LoggerFactory.getLogger(InboxMaintenance.class);

    private InboxAdmin inbox;
    private DataSource dataSource;

    public InboxMaintenance() {
    }

    public InboxMaintenance(DataSource dataSource) {
        setDataSource(dataSource);
    }

    /**
     * For a route: replays one account's stored deliveries ({@code null}: every account) received in
     * {@code [from, to)}, ISO-8601 instants, either blank or null for an open end.
     */
    public int replay(Long account, String from, String to) throws SQLException {
        return replayReceived(account, instant(from), instant(to));
    }

    /**
     * Replays the stored deliveries of one account ({@code null}: every account) received in {@code [from, to)}
     * (either bound may be null); the worker picks them up at its next poll. Returns how many rows.
     */
    public int replayReceived(Long account, Instant from, Instant to) throws SQLException {
        if (from != null && to != null && !from.isBefore(to)) {
            throw new IllegalArgumentException("replay: --from must be before --to");
        }
        int n = inbox.replay(account, from, to);
        LOG.info("Replay: {} stored deliveries queued again (account {}, received from {} to {})", n,
                account == null ? "any" : account, from == null ? "the first" : from, to == null ? "now" : to);
        return n;
    }

    /** Every stored delivery of one account. */
    public int replayAccount(long account) throws SQLException {
        return replayReceived(account, null, null);
    }

    /** Puts every failed row back in the queue with fresh attempts. */
    public int requeueFailed() throws SQLException {
        return requeue(null, null);
    }

    /** Puts the failed rows of one account back in the queue with fresh attempts. */
    public int requeueFailedOfAccount(long account) throws SQLException {
        return requeue(account, null);
    }

    /** Puts one failed row back in the queue; returns 1, or 0 when no failed row has this key. */
    public int requeueFailedRow(String deliveryKey) throws SQLException {
        return requeue(null, deliveryKey);
    }

    private int requeue(Long account, String deliveryKey) throws SQLException {
        int n = inbox.requeueFailed(account, deliveryKey);
        if (deliveryKey != null) {
            LOG.info("Requeued failed inbox row {}: {}", deliveryKey, n == 1 ? "done" : "no such failed row");
        } else {
            LOG.info("Requeued {} failed inbox rows (account {})", n, account == null ? "any" : account);
        }
        return n;
    }

    /**
     * Drops the days of deliveries signed before {@code cutoff} (their failed rows moved, a day with pending rows left
     * until they are processed), then deletes the kept and leftover partitions' processed rows received before it, {@code batchSize} rows per statement until none is left; failed
     * and unprocessed rows are kept. Returns how many rows of the kept partition were deleted.
     */
    public long prune(Instant cutoff, int batchSize) throws SQLException {
        DayPartitions.Retired days = DayPartitions.INBOX.retire(dataSource, cutoff, InboxAdmin.UNFINISHED);
        if (!days.dropped().isEmpty()) {
            LOG.info("Pruned the days {} ({} failed rows moved into {})", days.dropped(), days.rowsMoved(),
                    DayPartitions.INBOX.leftover());
        }
        return inbox.prune(cutoff, batchSize, soFar -> { });
    }

    public long prune(Duration retention, int batchSize) throws SQLException {
        return prune(Instant.now().minus(retention), batchSize);
    }

    private static Instant instant(String s) {
        return s == null || s.isBlank() ? null : Instant.parse(s.trim());
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
        this.inbox = new InboxAdmin(dataSource);
    }
}
