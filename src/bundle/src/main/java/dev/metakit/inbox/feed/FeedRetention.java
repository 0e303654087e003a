package dev.metakit.inbox.feed;

import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.db.DayPartitions;
import dev.metakit.inbox.db.Jdbc;
import dev.metakit.inbox.db.RetentionJob;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The feed's retention, called by the retention route of {@code routes/retention.camel.yaml}: the days of changes
 * reconciled more than {@code METAKIT_FEED_RETENTION} ago are dropped once every change of theirs is published (a day
 * with unpublished changes waits for the publisher; unpublished ones are never deleted); the changes of
 * {@code position_changes_kept} published before then are deleted.
 * Retention bounds what a replay can send again.
 *
 * <p>With {@code metakit.feed.publisher=external} nothing marks a change published: Debezium streams each row from the
 * WAL, which holds it whatever becomes of the row (a replication slot keeps the WAL its connector has not confirmed).
 * Retention then drops the days of changes reconciled more than {@code METAKIT_FEED_RETENTION} ago, published or not.
 */
public class FeedRetention extends RetentionJob {
    private boolean inProcess = true;

    public FeedRetention() {
        super("metakit.feed.retention");
    }

    @Override
    protected long delete(DataSource dataSource, Instant cutoff, int batchSize, Jdbc.Progress progress)
            throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return inProcess ? ChangeStore.prunePublished(c, cutoff, batchSize, progress)
                    : ChangeStore.pruneReconciled(c, cutoff, batchSize, progress);
        }
    }

    @Override
    protected DayPartitions partitions() {
        return DayPartitions.FEED;
    }

    @Override
    protected DayPartitions.Unfinished unfinished() {
        return FeedMaintenance.unfinished(inProcess);
    }

    @Override
    protected String deletedRows() {
        return inProcess ? "feed changes published" : "feed changes reconciled (published by Debezium)";
    }

    /** The same words as the publisher's ({@link ChangePublisher#setPublisher}). */
    public void setPublisher(String publisher) {
        this.inProcess = EnumeratedSettings.feedPublishedInProcess(publisher);
    }
}
