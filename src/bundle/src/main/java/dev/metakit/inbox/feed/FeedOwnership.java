package dev.metakit.inbox.feed;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InstanceLiveness;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * One publisher per account across instances, by liveness, not by a connection: a boot owns an account's feed through
 * its row of {@code feed_owners} for as long as it beats in {@code inbox_instances} (the worker's heartbeat, the same
 * bound as the worker's claims: {@code metakit.worker.dead-after-millis}). Once its heartbeat is that old, or its row is
 * gone, any live boot may take the account, which bumps the row's epoch.
 *
 * <p>A paused process (SIGSTOP, a long GC, a frozen VM) keeps its connections, so nothing in the database can stop it
 * from sending when it wakes up. Two rules do:
 * <ul>
 * <li>A {@link Lease} is valid by this process's own monotonic clock for the time the database still counts its boot
 * as alive at the moment of the statement that confirmed it, less a margin ({@link #MARGIN_SHARE} of dead-after, for
 * the send under way at the last valid instant). The publisher checks it before each send; once it ran out (a process
 * that stood still for longer, whatever woke it) the account is confirmed in the database again before anything more
 * goes out, and is given up if it changed hands.</li>
 * <li>The statement that marks changes published checks owner and epoch ({@link #markPublished}): a boot that lost the
 * account marks nothing, so the new owner resumes at the first change not marked, with the same change ids.</li>
 * </ul>
 * A send already under way when the process froze still completes when it wakes (no lease can recall it): a repeat, with
 * its change id, of a change the new owner sends too.
 *
 * <p>The publisher asks here alone: a turn gets the account's {@link #lease}, asks {@link #stillOwns} before each batch
 * and {@link #valid} before each send, and marks what the outlet confirmed with {@link #markPublished}, which reports
 * how many rows it marked per account: the publisher stops an account when that is short, and {@link #forget}s its
 * lease. An account stays this boot's between turns, and so does its lease: a turn under a lease still valid by this
 * process's clock asks the database nothing (at a steady trickle, a statement per change saved); a clean stop gives
 * them all up ({@link #releaseAll}).
 */
final class FeedOwnership {
    /** The share of dead-after kept as a margin between this boot's last valid send and another boot's takeover. */
    static final double MARGIN_SHARE = 0.2;

    /*
     * Takes the account when it has no owner, or its owner's boot no longer beats; confirms it (epoch unchanged) when
     * this boot owns it already. Only a live boot takes or keeps one. The upsert locks the row: two boots taking one
     * account at once serialise, and the later one sees the earlier one's (live) ownership. Returns the epoch and how
     * old this boot's heartbeat is on the database's clock.
     */
    private static final String TAKE = "with live as (" + InstanceLiveness.LIVE_TOKENS + """
            ),
            mine as (select greatest(heartbeat_at, pg_postmaster_start_time()) as beat from inbox_instances
                      where boot_token = ? and boot_token in (select boot_token from live))
            insert into feed_owners as o (account_id, owner_token, owner_instance, epoch)
            select ?, ?, ?, 1 from mine
            on conflict on constraint feed_owners_pk do update
               set owner_token = excluded.owner_token, owner_instance = excluded.owner_instance,
                   epoch = case when o.owner_token = excluded.owner_token then o.epoch else o.epoch + 1 end,
                   taken_at = case when o.owner_token = excluded.owner_token then o.taken_at else now() end
             where o.owner_token = excluded.owner_token
                or not exists (select 1 from live where live.boot_token = o.owner_token)
            returning o.epoch, (select extract(epoch from now() - beat) from mine)""";

    /** Of the given accounts, those no other live boot owns, in the given order. */
    private static final String NOT_HELD_BY_OTHERS = "with live as (" + InstanceLiveness.LIVE_TOKENS + """
            )
            select u.a from unnest(?::bigint[]) with ordinality as u(a, i)
             where not exists (select 1 from feed_owners o
                                where o.account_id = u.a and o.owner_token <> ?
                                  and o.owner_token in (select boot_token from live))
             order by u.i""";

    private final Claimant self;
    private final Duration deadAfter;
    private final LongSupplier nanoClock;
    /** the lease each account was last taken or confirmed under */
    private final Map<Long, Lease> leases = new ConcurrentHashMap<>();

    /**
     * A boot's right to publish one account: the epoch it holds it at, and until when (on {@code System.nanoTime()})
     * it may send without asking the database again.
     */
    record Lease(long accountId, long epoch, long validUntilNanos) {
    }

    FeedOwnership(Claimant self, Duration deadAfter) {
        this(self, deadAfter, System::nanoTime);
    }

    /** {@code nanoClock}: this process's monotonic clock ({@code System::nanoTime}; a test's, to stand still). */
    FeedOwnership(Claimant self, Duration deadAfter, LongSupplier nanoClock) {
        this.self = self;
        this.deadAfter = deadAfter;
        this.nanoClock = nanoClock;
    }

    /**
     * The account's lease for this turn: the one it holds while valid by this process's clock, else the account taken
     * or confirmed in the database; null when another live instance publishes it.
     */
    Lease lease(Connection c, long accountId) throws SQLException {
        Lease held = leases.get(accountId);
        if (held != null && valid(held)) {
            return held;
        }
        return remember(accountId, take(c, accountId));
    }

    /**
     * Asked before each batch: the lease to send it under ({@link #renewed}), or null, which ends the turn (the account
     * is someone else's now).
     */
    Lease stillOwns(Connection c, Lease lease) throws SQLException {
        return remember(lease.accountId(), renewed(c, lease));
    }

    /** The account is not (or no longer surely) this boot's: its next turn asks the database. */
    void forget(long accountId) {
        leases.remove(accountId);
    }

    private Lease remember(long accountId, Lease lease) {
        if (lease == null) {
            leases.remove(accountId);
        } else {
            leases.put(accountId, lease);
        }
        return lease;
    }

    /**
     * Takes or confirms the account for this boot. Returns its lease, or null when another live boot owns it, or when
     * this boot is not alive enough to publish (its heartbeat stopped or is too old for a lease worth the name).
     */
    Lease take(Connection c, long accountId) throws SQLException {
        long asked = nanoClock.getAsLong();
        try (PreparedStatement s = c.prepareStatement(TAKE)) {
            s.setString(1, interval(deadAfter));
            s.setObject(2, self.bootToken());
            s.setLong(3, accountId);
            s.setObject(4, self.bootToken());
            s.setString(5, self.instanceId());
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                long epoch = rs.getLong(1);
                BigDecimal beatAge = rs.getBigDecimal(2);
                // the database counts this boot alive until its beat + dead-after, at least asked + (dead-after - age)
                // in real time (now() is taken after `asked`); the margin is what the last send may still take
                long ageNanos = beatAge == null ? deadAfter.toNanos() : Math.max(0, beatAge.movePointRight(9).longValue());
                long validFor = deadAfter.toNanos() - ageNanos - margin().toNanos();
                return validFor > 0 ? new Lease(accountId, epoch, asked + validFor) : null;
            }
        }
    }

    /** Whether this boot may still send under {@code lease}, by its own clock (asked before each send). */
    boolean valid(Lease lease) {
        return nanoClock.getAsLong() - lease.validUntilNanos() < 0;
    }

    /**
     * {@code lease} while it is valid; once it ran out, the account confirmed again in the database: a fresh lease at
     * the same epoch, or null when the account changed hands meanwhile (even if it came back: what the caller read
     * under the old epoch may be stale) or this boot cannot hold it now.
     */
    Lease renewed(Connection c, Lease lease) throws SQLException {
        if (valid(lease)) {
            return lease;
        }
        Lease again = take(c, lease.accountId());
        return again != null && again.epoch() == lease.epoch() ? again : null;
    }

    /** Of {@code accounts}, those this boot may try to take: none owned by another live boot. */
    List<Long> notHeldByOthers(Connection c, Collection<Long> accounts) throws SQLException {
        List<Long> out = new ArrayList<>(accounts.size());
        if (accounts.isEmpty()) {
            return out;
        }
        try (PreparedStatement s = c.prepareStatement(NOT_HELD_BY_OTHERS)) {
            s.setString(1, interval(deadAfter));
            s.setArray(2, c.createArrayOf("bigint", accounts.toArray()));
            s.setObject(3, self.bootToken());
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getLong(1));
                }
            }
        }
        return out;
    }

    /**
     * Marks these changes of the lease's account published if this boot still owns the account at the lease's epoch.
     * Returns how many it marked: 0 when the account was taken over.
     */
    int markPublished(Connection c, Lease lease, Collection<FeedChange> changes) throws SQLException {
        return markPublished(c, List.of(lease), changes).getOrDefault(lease.accountId(), 0);
    }

    /** The same for several accounts, in one statement, each fenced by its lease. Returns how many per account. */
    Map<Long, Integer> markPublished(Connection c, Collection<Lease> leases, Collection<FeedChange> changes)
            throws SQLException {
        Map<Long, Long> epochs = new LinkedHashMap<>();
        leases.forEach(l -> epochs.put(l.accountId(), l.epoch()));
        return ChangeStore.markPublished(c, epochs, changes, self.bootToken());
    }

    /** Gives up every account this boot owns (a clean stop): the other instances take them at once. */
    int releaseAll(Connection c) throws SQLException {
        leases.clear();
        try (PreparedStatement s = c.prepareStatement("delete from feed_owners where owner_token = ?")) {
            s.setObject(1, self.bootToken());
            return s.executeUpdate();
        }
    }

    Duration margin() {
        return Duration.ofNanos((long) (deadAfter.toNanos() * MARGIN_SHARE));
    }

    Claimant self() {
        return self;
    }

    private static String interval(Duration d) {
        return d.toMillis() + " milliseconds";
    }
}
