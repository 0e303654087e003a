package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.db.DayPartitions;
import dev.metakit.inbox.db.Jdbc;
import dev.metakit.inbox.db.RetentionJob;
import dev.metakit.inbox.inbox.InboxAdmin;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;

/**
 * The inbox's retention, called by {@code routes/retention.camel.yaml}: the days of deliveries signed more than
 * {@code METAKIT_RETENTION} ago are dropped, their failed rows moved into {@code webhook_inbox_leftover} (a day with
 * pending rows waits until they are processed); the processed rows of {@code webhook_inbox_kept} and
 * {@code webhook_inbox_leftover} received before then are deleted. The retention is also the dedupe
 * window (a MetaKit retry of a pruned delivery would be stored and worked again), so less than a day is refused at
 * startup. Failed rows are never pruned: they wait for an operator.
 */
public class InboxRetention extends RetentionJob {
    static final Duration MINIMUM = Duration.ofDays(1);

    public InboxRetention() {
        super("metakit.retention");
    }

    @Override
    protected long delete(DataSource dataSource, Instant cutoff, int batchSize, Jdbc.Progress progress)
            throws SQLException {
        return new InboxAdmin(dataSource).prune(cutoff, batchSize, progress);
    }

    @Override
    protected DayPartitions partitions() {
        return DayPartitions.INBOX;
    }

    @Override
    protected DayPartitions.Unfinished unfinished() {
        return InboxAdmin.UNFINISHED;
    }

    @Override
    protected String deletedRows() {
        return "processed inbox rows received";
    }

    @Override
    protected void check(Duration retention, String text) {
        if (retention.compareTo(MINIMUM) < 0) {
            throw new ConfigurationException("METAKIT_RETENTION must be at least P1D (it is the dedupe window: a MetaKit"
                    + " retry of a pruned delivery would be stored and worked again), got '" + text + "'");
        }
    }
}
