package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.DurationSetting;
import dev.metakit.inbox.config.Required;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * A retention job of the retention route ({@code routes/retention.camel.yaml}): deletes what is older than its
 * retention, in batches of {@code metakit.retention.batch-size} rows, and logs one line with the count.
 */
public abstract class RetentionJob {
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final String retentionKey;
    private DataSource dataSource;
    private Duration retention;
    private String retentionText;
    private Integer batchSize;

    /** @param retentionKey the property key of the retention, named by the messages */
    protected RetentionJob(String retentionKey) {
        this.retentionKey = retentionKey;
    }

    /** Deletes in batches what was kept since before {@code cutoff}; returns how many rows. */
    protected abstract long delete(DataSource dataSource, Instant cutoff, int batchSize) throws SQLException;

    /** What the log line counts, e.g. "processed inbox rows received". */
    protected abstract String deletedRows();

    /** Refuses a retention too short for what it deletes. */
    protected void check(Duration retention, String text) {
    }

    /** Prunes in batches until done; one line with the count. Returns how many rows. */
    public long prune() throws SQLException {
        Duration keep = Required.setting(retention, retentionKey);
        int batch = Required.setting(batchSize, "metakit.retention.batch-size");
        long started = System.nanoTime();
        Instant cutoff = Instant.now().minus(keep);
        long n = delete(dataSource, cutoff, batch);
        log.info("Retention: pruned {} {} before {} ({}={}) in {} ms", n, deletedRows(), cutoff, environmentName(retentionKey),
                retentionText, (System.nanoTime() - started) / 1_000_000);
        return n;
    }

    public void setRetention(String value) {
        Duration d = DurationSetting.parse(retentionKey, value);
        check(d, value.trim());
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

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    protected DataSource dataSource() {
        return dataSource;
    }

    static String environmentName(String key) {
        return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }
}
