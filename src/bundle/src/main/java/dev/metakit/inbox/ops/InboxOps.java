package dev.metakit.inbox.ops;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Instant;

/**
 * The bean {@code inboxMaintenance}: replay and requeue for a route's {@code bean:} step, e.g.
 * {@code bean:inboxMaintenance?method=replayAccount(2)}.
 */
public class InboxOps {
    private InboxMaintenance maintenance;

    /** Replays one account's stored deliveries (account null: all) received in [from, to); ISO-8601 instants or null. */
    public int replay(Long account, String from, String to) throws SQLException {
        return maintenance.replay(account, instant(from), instant(to));
    }

    public int replayAccount(long account) throws SQLException {
        return maintenance.replayAccount(account);
    }

    public int requeueFailed() throws SQLException {
        return maintenance.requeueFailed(null);
    }

    public int requeueFailedOfAccount(long account) throws SQLException {
        return maintenance.requeueFailed(account);
    }

    private static Instant instant(String s) {
        return s == null || s.isBlank() ? null : Instant.parse(s.trim());
    }

    public void setDataSource(DataSource dataSource) {
        this.maintenance = new InboxMaintenance(dataSource);
    }
}
