package dev.metakit.inbox.inbox;

import dev.metakit.inbox.db.Jdbc;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * This boot's row in {@code inbox_instances}: its heartbeat, on the database's clock (a paused process keeps its
 * connections, so only a beat that stops says it is gone). {@link InboxClaims} treats the claims of a boot that has
 * not beaten for its dead-after time as free. A boot's first beat also takes back the claims of the earlier boots of
 * its instance id that no longer beat (a restart after a crash): their rows are free at once, not after dead-after.
 */
public class InstanceLiveness {
    /** Rows of boots gone this long are removed (their claims were free long before). */
    private static final Duration FORGET_AFTER = Duration.ofDays(1);

    /*
     * The boots beating now (the parameter: deadAfter). A claim made by any other boot is free (a claim without a token
     * predates the column: its lease alone frees it). A restart of PostgreSQL counts as
     * a beat of every boot: a stop or a crash of the database is nobody's death, and each boot beats again within a
     * heartbeat of its return. The change feed's ownership ({@code feed_owners}) follows the same rule.
     */
    public static final String LIVE_TOKENS = """
            select boot_token from inbox_instances
             where greatest(heartbeat_at, pg_postmaster_start_time()) > now() - ?::interval""";

    private final DataSource dataSource;
    private final Claimant self;
    private final Duration quietEarlierBoot;
    private volatile boolean registered;

    /**
     * {@code quietEarlierBoot}: how long an earlier boot of the same instance id must have been silent for this boot
     * to take its claims back at once (a few heartbeats: a boot that still beats is a live sibling with the same id,
     * such as two processes on one host with the default id, and keeps its claims).
     */
    public InstanceLiveness(DataSource dataSource, Claimant self, Duration quietEarlierBoot) {
        this.dataSource = dataSource;
        this.self = self;
        this.quietEarlierBoot = quietEarlierBoot;
    }

    /**
     * Says this boot is alive (and registers it, the first time). Returns how many earlier boots of this instance id
     * it took the claims back from (on its first successful beat; 0 after).
     */
    public int beat() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            try (PreparedStatement ps = c.prepareStatement("""
                    insert into inbox_instances (boot_token, instance_id) values (?, ?)
                    on conflict (boot_token) do update set heartbeat_at = now()""")) {
                ps.setObject(1, self.bootToken());
                ps.setString(2, self.instanceId());
                ps.executeUpdate();
            }
            if (registered) {
                return 0;
            }
            int earlier = forgetEarlierBoots(c);
            registered = true;
            return earlier;
        }
    }

    /** Removes this boot's row: the claims it still has are free for anyone at once (a clean stop). */
    public void leave() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "delete from inbox_instances where boot_token = ?")) {
            ps.setObject(1, self.bootToken());
            ps.executeUpdate();
        }
    }

    // a claim whose boot has no row is free (InboxClaims): removing the row is the release
    private int forgetEarlierBoots(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                with earlier as (
                    delete from inbox_instances
                     where boot_token <> ?
                       and ((instance_id = ? and heartbeat_at < now() - ?::interval)
                            or heartbeat_at < now() - ?::interval)
                    returning instance_id)
                select count(*) from earlier where instance_id = ?""")) {
            ps.setObject(1, self.bootToken());
            ps.setString(2, self.instanceId());
            ps.setString(3, Jdbc.interval(quietEarlierBoot));
            ps.setString(4, Jdbc.interval(FORGET_AFTER));
            ps.setString(5, self.instanceId());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    public Claimant self() {
        return self;
    }
}
