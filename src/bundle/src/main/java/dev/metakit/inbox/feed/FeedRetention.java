package dev.metakit.inbox.feed;

import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.db.RetentionJob;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The feed's retention, called by the retention route of {@code routes/retention.camel.yaml}: changes published more
 * than {@code METAKIT_FEED_RETENTION} ago are deleted (unpublished ones never are). Retention bounds what a replay can
 * send again.
 *
 * <p>With {@code metakit.feed.publisher=external} nothing marks a change published: Debezium streams each row from the
 * WAL, which holds it whatever becomes of the row (a replication slot keeps the WAL its connector has not confirmed).
 * Retention then deletes changes reconciled more than {@code METAKIT_FEED_RETENTION} ago, published or not.
 */
public class FeedRetention extends RetentionJob {
    private boolean inProcess = true;

    public FeedRetention() {
        super("metakit.feed.retention");
    }

    @Override
    protected long delete(DataSource dataSource, Instant cutoff, int batchSize) throws SQLException {
        FeedMaintenance feed = new FeedMaintenance(dataSource);
        return inProcess ? feed.prunePublished(cutoff, batchSize) : feed.pruneReconciled(cutoff, batchSize);
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
