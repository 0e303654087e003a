package dev.metakit.inbox.feed;

import dev.metakit.inbox.config.EnumeratedSettings;
import dev.metakit.inbox.db.RetentionJob;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The bean {@code changeFeedOps}: replay for a route's {@code bean:} step
 * ({@code bean:changeFeedOps?method=replayAccount(2, 1)}), and the feed's retention, called by the retention route of
 * {@code routes/retention.camel.yaml}: changes published more than {@code METAKIT_FEED_RETENTION} ago are deleted
 * (unpublished ones never are). Retention bounds what a replay can send again.
 *
 * <p>With {@code metakit.feed.publisher=external} nothing here marks a change published: Debezium streams each row
 * from the WAL, which holds it whatever becomes of the row (a replication slot keeps the WAL its connector has not
 * confirmed). Retention then deletes changes reconciled more than {@code METAKIT_FEED_RETENTION} ago, published or
 * not, and replay is the topic's (a consumer group's offsets set back), so the replays here refuse.
 */
public class FeedRetention extends RetentionJob {
    private boolean inProcess = true;

    public FeedRetention() {
        super("metakit.feed.retention");
    }

    public int replayAccount(long accountId, long fromSeq) throws SQLException {
        requireInProcess();
        return new FeedMaintenance(dataSource()).replayAccount(accountId, fromSeq);
    }

    /** @param since an ISO-8601 instant: every change reconciled at or after it */
    public int replaySince(String since) throws SQLException {
        requireInProcess();
        return new FeedMaintenance(dataSource()).replaySince(Instant.parse(since.trim()));
    }

    @Override
    protected long delete(DataSource dataSource, Instant cutoff, int batchSize) throws SQLException {
        FeedMaintenance feed = new FeedMaintenance(dataSource);
        return inProcess ? feed.prune(cutoff, batchSize) : feed.pruneReconciled(cutoff, batchSize);
    }

    @Override
    protected String deletedRows() {
        return inProcess ? "feed changes published" : "feed changes reconciled (published by Debezium)";
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
