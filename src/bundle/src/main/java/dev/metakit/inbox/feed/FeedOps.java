package dev.metakit.inbox.feed;

import dev.metakit.inbox.db.RetentionJob;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The bean {@code changeFeedOps}: replay for a route's {@code bean:} step
 * ({@code bean:changeFeedOps?method=replayAccount(2, 1)}), and the feed's retention, called by the retention route of
 * {@code routes/retention.camel.yaml}: changes published more than {@code METAKIT_FEED_RETENTION} ago are deleted
 * (unpublished ones never are). Retention bounds what a replay can send again.
 */
public class FeedOps extends RetentionJob {

    public FeedOps() {
        super("metakit.feed.retention");
    }

    public int replayAccount(long accountId, long fromSeq) throws SQLException {
        return new FeedMaintenance(dataSource()).replayAccount(accountId, fromSeq);
    }

    /** @param since an ISO-8601 instant: every change reconciled at or after it */
    public int replaySince(String since) throws SQLException {
        return new FeedMaintenance(dataSource()).replaySince(Instant.parse(since.trim()));
    }

    @Override
    protected long delete(DataSource dataSource, Instant cutoff, int batchSize) throws SQLException {
        return new FeedMaintenance(dataSource).prune(cutoff, batchSize);
    }

    @Override
    protected String deletedRows() {
        return "feed changes published";
    }
}
