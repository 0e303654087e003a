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
 * <p>
 * The beats go through a connection of their own, kept from one beat to the next: a beat never waits for the pool
 * behind the ingest's and the worker's statements, which on a loaded host can take longer than dead-after and make a
 * live boot look dead. The connection answers within {@code beatTimeout} or is dropped, and the next beat takes a
 * new one (a server gone in a failover leaves a socket that would otherwise hang until the socket timeout).
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

    /** How long a beat may take by default before its connection is dropped: half the default dead-after. */
    static final Duration DEFAULT_BEAT_TIMEOUT = Duration.ofMillis(2500);

    private final DataSource dataSource;
    private final Claimant self;
    private final Duration quietEarlierBoot;
    private final Duration beatTimeout;
    private volatile boolean registered;
    /** The beats' own connection (null until the first beat, and after one failed). */
    private Connection beating;
    private boolean lentAutoCommit; // guarded by this, with beating
    private int lentNetworkTimeout; // guarded by this, with beating

    /**
     * {@code quietEarlierBoot}: how long an earlier boot of the same instance id must have been silent for this boot
     * to take its claims back at once (a few heartbeats: a boot that still beats is a live sibling with the same id,
     * such as two processes on one host with the default id, and keeps its claims).
     */
    public InstanceLiveness(DataSource dataSource, Claimant self, Duration quietEarlierBoot) {
        this(dataSource, self, quietEarlierBoot, DEFAULT_BEAT_TIMEOUT);
    }

    /** {@code beatTimeout}: how long a beat may wait for the database before its connection is dropped. */
    public InstanceLiveness(DataSource dataSource, Claimant self, Duration quietEarlierBoot, Duration beatTimeout) {
        this.dataSource = dataSource;
        this.self = self;
        this.quietEarlierBoot = quietEarlierBoot;
        this.beatTimeout = beatTimeout;
    }

    /**
     * Says this boot is alive (and registers it, the first time). Returns how many earlier boots of this instance id
     * it took the claims back from (on its first successful beat; 0 after).
     */
    public synchronized int beat() throws SQLException {
        try {
            Connection c = beatingConnection();
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
        } catch (SQLException | RuntimeException e) {
            dropBeatingConnection();
            throw e;
        }
    }

    /** Removes this boot's row: the claims it still has are free for anyone at once (a clean stop). */
    public synchronized void leave() throws SQLException {
        dropBeatingConnection();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "delete from inbox_instances where boot_token = ?")) {
            ps.setObject(1, self.bootToken());
            ps.executeUpdate();
        }
    }

    private Connection beatingConnection() throws SQLException {
        if (beating == null) {
            Connection c = dataSource.getConnection();
            try {
                lentAutoCommit = c.getAutoCommit();
                lentNetworkTimeout = c.getNetworkTimeout();
                c.setAutoCommit(true);
                c.setNetworkTimeout(Runnable::run, Math.toIntExact(beatTimeout.toMillis()));
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
            beating = c;
        }
        return beating;
    }

    private void dropBeatingConnection() {
        if (beating == null) {
            return;
        }
        try {
            // a host's pool may not reset what the beat set: the connection goes back as it was lent
            beating.setNetworkTimeout(Runnable::run, lentNetworkTimeout);
            beating.setAutoCommit(lentAutoCommit);
        } catch (SQLException | RuntimeException ignored) {
            // a broken connection: closed below, and the pool discards it
        }
        try {
            beating.close();
        } catch (SQLException | RuntimeException ignored) {
            // a broken connection: the pool discards it
        }
        beating = null;
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
