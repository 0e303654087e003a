package dev.metakit.inbox.ops;

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
 * Prunes processed inbox rows older than {@code METAKIT_RETENTION}, called by {@code routes/retention.camel.yaml}.
 * The retention is also the dedupe window (a MetaKit retry of a pruned delivery would be stored and worked again),
 * so less than a day is refused at startup. Failed rows are never pruned: they wait for an operator.
 */
public class InboxRetention implements CamelContextAware {
    private static final Logger LOG = LoggerFactory.getLogger(InboxRetention.class);
    static final Duration MINIMUM = Duration.ofDays(1);

    private CamelContext camelContext;
    private String dataSourceBean = "inboxDataSource";
    private DataSource dataSource;
    private Duration retention = Duration.ofDays(7);
    private String retentionText = "P7D";
    private int batchSize = 5000;

    /** Prunes in batches until done; one line with the count. Returns how many rows. */
    public long prune() throws SQLException {
        long started = System.nanoTime();
        Instant cutoff = Instant.now().minus(retention);
        long n = new InboxMaintenance(dataSource()).prune(cutoff, batchSize);
        LOG.info("Retention: pruned {} processed inbox rows received before {} (METAKIT_RETENTION={}) in {} ms", n,
                cutoff, retentionText, (System.nanoTime() - started) / 1_000_000);
        return n;
    }

    private DataSource dataSource() {
        if (dataSource == null) {
            dataSource = camelContext.getRegistry().lookupByNameAndType(dataSourceBean, DataSource.class);
        }
        return dataSource;
    }

    public void setRetention(String value) {
        Duration d = DurationSetting.parse("metakit.retention", value);
        if (d.compareTo(MINIMUM) < 0) {
            throw new ConfigurationException("METAKIT_RETENTION must be at least P1D (it is the dedupe window: a MetaKit"
                    + " retry of a pruned delivery would be stored and worked again), got '" + value.trim() + "'");
        }
        this.retention = d;
        this.retentionText = value.trim();
    }

    public Duration getRetention() {
        return retention;
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
