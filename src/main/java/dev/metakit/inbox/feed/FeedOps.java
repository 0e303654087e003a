package dev.metakit.inbox.feed;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.DurationSetting;
import org.apache.camel.CamelContext;
import org.apache.camel.CamelContextAware;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;

/**
 * The bean {@code changeFeedOps}: replay for a route's {@code bean:} step
 * ({@code bean:changeFeedOps?method=replayAccount(2, 1)}), and the feed's retention, called by the retention route of
 * {@code routes/changes.camel.yaml}: changes published more than {@code METAKIT_FEED_RETENTION} ago are deleted
 * (unpublished ones never are). Retention bounds what a replay can send again.
 */
public class FeedOps implements CamelContextAware {
    private static final Logger LOG = LoggerFactory.getLogger(FeedOps.class);

    private CamelContext camelContext;
    private String dataSourceBean = "inboxDataSource";
    private volatile DataSource dataSource;
    private Duration retention = Duration.ofDays(7);
    private String retentionText = "P7D";
    private int batchSize = 5000;

    public int replayAccount(long accountId, long fromSeq) throws SQLException {
        return maintenance().replayAccount(accountId, fromSeq);
    }

    /** @param since an ISO-8601 instant: every change reconciled at or after it */
    public int replaySince(String since) throws SQLException {
        return maintenance().replaySince(Instant.parse(since.trim()));
    }

    /** Prunes in batches until done; one line with the count. Returns how many changes. */
    public long prune() throws SQLException {
        long started = System.nanoTime();
        Instant cutoff = Instant.now().minus(retention);
        long n = maintenance().prune(cutoff, batchSize);
        LOG.info("Feed retention: pruned {} changes published before {} (METAKIT_FEED_RETENTION={}) in {} ms", n,
                cutoff, retentionText, (System.nanoTime() - started) / 1_000_000);
        return n;
    }

    private FeedMaintenance maintenance() {
        if (dataSource == null) {
            dataSource = camelContext.getRegistry().lookupByNameAndType(dataSourceBean, DataSource.class);
        }
        return new FeedMaintenance(dataSource);
    }

    public void setRetention(String value) {
        Duration d = DurationSetting.parse("metakit.feed.retention", value);
        this.retention = d;
        this.retentionText = value.trim();
    }

    public void setBatchSize(int batchSize) {
        if (batchSize < 1) {
            throw new ConfigurationException("METAKIT_RETENTION_BATCH_SIZE must be a positive number of rows, got " + batchSize);
        }
        this.batchSize = batchSize;
    }

    public void setDataSourceBean(String name) {
        this.dataSourceBean = name;
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public void setCamelContext(CamelContext camelContext) {
        this.camelContext = camelContext;
    }

    @Override
    public CamelContext getCamelContext() {
        return camelContext;
    }
}
