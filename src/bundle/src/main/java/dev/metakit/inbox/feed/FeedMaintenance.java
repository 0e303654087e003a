package dev.metakit.inbox.feed;

import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.db.DayPartitions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;

/**
 * Operators' changes to the feed, plain SQL (no Camel): replay and pruning. A replay marks changes unpublished
 * again; the publisher of any instance sends them again, in seq order per account, with their original ids, so a
 * downstream that dedupes by {@code MetaKitChangeId} sees nothing new and one that does not gets the history again.
 * Used by {@code InboxCommand}, the ops page, {@link FeedRetention}, and a route's {@code bean:} step as the bean
 * {@code feedMaintenance}: {@code bean:feedMaintenance?method=replayAccount(2, 1)}, or
 * {@code replaySince('2026-12-01T00:00:00Z')}.
 *
 * <p>With {@code metakit.feed.publisher=external} (Debezium streams the table from the WAL) the replays refuse: a
 * change marked unpublished again would be sent by nobody; replay is the topic's (a consumer group's offsets set back).
 */
public class FeedMaintenance {
    private static final Logger LOG = LoggerFactory.getLogger(FeedMaintenance.class);

    private DataSource dataSource;
    private boolean inProcess = true;

    public FeedMaintenance() {
    }

    public FeedMaintenance(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Publishes again the account's retained changes from {@code fromSeq} on. Returns how many. */
    public int replayAccount(long accountId, long fromSeq) throws SQLException {
        requireInProcess();
        if (fromSeq < 1) {
            throw new IllegalArgumentException("replay: the first seq is 1, got " + fromSeq);
        }
        int n;
        try (Connection c = dataSource.getConnection()) {
            n = ChangeStore.replayFrom(c, accountId, fromSeq);
        }
        LOG.info("Feed replay: {} changes of account {} from seq {} will be published again", n, accountId, fromSeq);
        return n;
    }

    /** For a route: {@link #replayReconciledSince} an ISO-8601 instant. */
    public int replaySince(String since) throws SQLException {
        return replayReconciledSince(Instant.parse(since.trim()));
    }

    /** Publishes again every retained change reconciled at or after {@code since}. Returns how many. */
    public int replayReconciledSince(Instant since) throws SQLException {
        requireInProcess();
        int n;
        try (Connection c = dataSource.getConnection()) {
            n = ChangeStore.replaySince(c, since);
        }
        LOG.info("Feed replay: {} changes reconciled since {} will be published again", n, since);
        return n;
    }

    /** The feed's lag ({@code lagSeconds}) and how many changes wait ({@code unpublished}), for the ops page. */
    public Map<String, Object> lagSummary() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return ChangeStore.lagSummary(c);
        }
    }

    /**
     * Drops the days of changes reconciled before {@code cutoff} and deletes the kept partition's changes reconciled
     * before it, published or not: retention when Debezium publishes the table from the WAL
     * (metakit.feed.publisher=external), where no row is ever marked published. Returns the kept rows deleted.
     */
    public long pruneReconciled(Instant cutoff, int batchSize) throws SQLException {
        DayPartitions.FEED.retire(dataSource, cutoff, unfinished(false));
        try (Connection c = dataSource.getConnection()) {
            return ChangeStore.pruneReconciled(c, cutoff, batchSize, soFar -> { });
        }
    }

    /**
     * Drops the days of changes reconciled before {@code cutoff} (a day with unpublished changes waits) and deletes the kept
     * partition's changes published before it, {@code batchSize} per statement; unpublished ones stay. Returns the
     * kept rows deleted.
     */
    public long prunePublished(Instant cutoff, int batchSize) throws SQLException {
        DayPartitions.FEED.retire(dataSource, cutoff, unfinished(true));
        try (Connection c = dataSource.getConnection()) {
            return ChangeStore.prunePublished(c, cutoff, batchSize, soFar -> { });
        }
    }

    /**
     * What a day whose time is up waits for: its unpublished changes when the in-process publisher sends them (the
     * day is dropped once they are sent; none is moved, so a backlog is never copied); nothing when Debezium does (it
     * read them from the WAL).
     */
    static DayPartitions.Unfinished unfinished(boolean inProcess) {
        return new DayPartitions.Unfinished(inProcess ? "published_at is null" : null, null);
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The same words as the publisher's ({@link ChangePublisher#setPublisher}). */
    public void setPublisher(String publisher) {
        this.inProcess = EnumeratedSettings.feedPublishedInProcess(publisher);
    }

    private void requireInProcess() {
        if (!inProcess) {
            throw new IllegalStateException("feed replay is the in-process publisher's; with"
                    + " METAKIT_FEED_PUBLISHER=external replay from the topic (set the consumer group's offsets back)");
        }
    }
}
