package dev.metakit.inbox.feed;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who may publish an account: the publisher asks here alone. A turn gets the account's {@link #lease}, asks
 * {@link #stillOwns} before each batch and {@link #mayStillSend} before each send, and marks what the outlet confirmed
 * with {@link #markPublished}, which reports how many rows it marked per account: the publisher stops an account when
 * that is short, and {@link #forget}s its lease.
 *
 * <p>Backed by {@link FeedOwnership}: a boot owns an account's feed (a row of {@code feed_owners}) while its worker's
 * heartbeat lasts, so a crashed or paused instance loses its accounts within dead-after and another live one takes
 * them (bumping the epoch). The lease is checked by this process's own clock (no round trip while it is valid); once
 * it ran out the account is confirmed in the database, and given up if it changed hands. The mark is fenced by owner
 * and epoch, so a boot that woke up after losing the account marks nothing. An account stays this boot's between
 * turns, and so does its lease: a turn under a lease still valid by this process's clock asks the database nothing (at
 * a steady trickle, a statement per change saved); a clean stop gives them all up ({@link #releaseAll}).
 */
final class AccountOwnership {
    private final FeedOwnership owners;
    /** the lease each account was last taken or confirmed under */
    private final Map<Long, FeedOwnership.Lease> leases = new ConcurrentHashMap<>();

    AccountOwnership(FeedOwnership owners) {
        this.owners = owners;
    }

    /**
     * The account's lease for this turn: the one it holds while valid by this process's clock, else the account taken
     * or confirmed in the database; null when another live instance publishes it.
     */
    FeedOwnership.Lease lease(Connection c, long account) throws SQLException {
        FeedOwnership.Lease held = leases.get(account);
        if (held != null && owners.valid(held)) {
            return held;
        }
        return remember(account, owners.take(c, account));
    }

    /**
     * Asked before each batch: the lease to send it under (the same while valid by this process's clock, else
     * confirmed in the database), or null, which ends the turn (the account is someone else's now).
     */
    FeedOwnership.Lease stillOwns(Connection c, FeedOwnership.Lease lease) throws SQLException {
        return remember(lease.accountId(), owners.renewed(c, lease));
    }

    /** The account is not (or no longer surely) this boot's: its next turn asks the database. */
    void forget(long account) {
        leases.remove(account);
    }

    /** Asked before each send of a batch, by this process's clock alone: false stops handing changes over. */
    boolean mayStillSend(FeedOwnership.Lease lease) {
        return owners.valid(lease);
    }

    /**
     * Marks the confirmed changes of several accounts published in one statement, each account fenced by its lease's
     * owner and epoch. Returns how many it marked per account.
     */
    Map<Long, Integer> markPublished(Connection c, Collection<FeedOwnership.Lease> leases, Collection<Long> changeIds)
            throws SQLException {
        return owners.markPublished(c, leases, changeIds);
    }

    /** Of {@code accounts}, those no other live instance owns (the backstop offers only these). */
    List<Long> notHeldByOthers(Connection c, Collection<Long> accounts) throws SQLException {
        return owners.notHeldByOthers(c, accounts);
    }

    /** Gives up every account this boot owns (a clean stop): the other instances take them at once. */
    int releaseAll(Connection c) throws SQLException {
        leases.clear();
        return owners.releaseAll(c);
    }

    private FeedOwnership.Lease remember(long account, FeedOwnership.Lease lease) {
        if (lease == null) {
            leases.remove(account);
        } else {
            leases.put(account, lease);
        }
        return lease;
    }
}
