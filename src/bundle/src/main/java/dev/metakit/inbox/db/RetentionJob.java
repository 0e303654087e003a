package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.DurationSetting;
import dev.metakit.inbox.config.Required;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * A retention job of the retention route ({@code routes/retention.camel.yaml}) for one table partitioned by day
 * ({@link DayPartitions}): makes the days ahead, retires every day whose end is older than the retention (the day
 * dropped, its dead letters moved into the leftover partition; a day with rows still to be worked waits for them),
 * deletes the finished rows of the kept and leftover partitions that are older than the retention in batches of
 * {@code metakit.retention.batch-size} rows, and logs one line.
 */
public abstract class RetentionJob {
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final String retentionKey;
    private DataSource dataSource;
    private Duration retention;
    private String retentionText;
    private Integer batchSize;
    private Clock clock = Clock.systemUTC();
    /** how often a long prune of the kept partition says how far it got */
    private static final long PROGRESS_NANOS = 10_000_000_000L;

    /** @param retentionKey the property key of the retention, named by the messages */
    protected RetentionJob(String retentionKey) {
        this.retentionKey = retentionKey;
    }

    /**
     * Deletes in batches the finished rows of the kept partition from before {@code cutoff}, telling {@code progress}
     * the count so far after each batch; returns how many rows.
     */
    protected abstract long delete(DataSource dataSource, Instant cutoff, int batchSize, Jdbc.Progress progress)
            throws SQLException;

    /** The table's days. */
    protected abstract DayPartitions partitions();

    /** What a day whose time is up still holds: rows it waits for, rows that move. */
    protected abstract DayPartitions.Unfinished unfinished();

    /** What the log line counts, e.g. "processed inbox rows received". */
    protected abstract String deletedRows();

    /** Refuses a retention too short for what it deletes. */
    protected void check(Duration retention, String text) {
    }

    /**
     * Makes the days ahead, retires the days past the retention, prunes the kept partition; one line with what was
     * done. Returns how many rows of the kept partition were deleted.
     */
    public long prune() throws SQLException {
        Duration keep = Required.setting(retention, retentionKey);
        int batch = Required.setting(batchSize, "metakit.retention.batch-size");
        long started = System.nanoTime();
        Instant now = clock.instant();
        Instant cutoff = now.minus(keep);
        DayPartitions days = partitions();
        List<String> made = days.makeAhead(dataSource, now);
        DayPartitions.Retired retired = days.retire(dataSource, cutoff, unfinished());
        long[] lastTold = {started};
        long n = delete(dataSource, cutoff, batch, soFar -> {
            if (System.nanoTime() - lastTold[0] > PROGRESS_NANOS) {
                lastTold[0] = System.nanoTime();
                log.info("Retention: {} {} pruned so far", soFar, deletedRows());
            }
        });
        log.info("Retention: pruned {} {} before {} ({}={}) in {} ms; days dropped {} ({} rows moved into {}, {} ms"
                        + " under the table's lock), made ahead {}{}{}", n, deletedRows(), cutoff,
                environmentName(retentionKey), retentionText, (System.nanoTime() - started) / 1_000_000,
                retired.dropped(), retired.rowsMoved(), days.leftover(), retired.lockedMillis(), made,
                retired.waiting() == null ? "" : "; " + retired.waiting() + " kept until its rows are worked",
                retired.lockBusy() ? "; the next day left for the next run (its table was busy)" : "");
        return n;
    }

    /** The time retention counts from; a test sets its own. */
    public void setClock(Clock clock) {
        this.clock = clock;
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
