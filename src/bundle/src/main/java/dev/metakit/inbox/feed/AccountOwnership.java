package dev.metakit.inbox.feed;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

/**
 * Who may publish an account: the publisher asks here alone. A turn {@link #take}s the account, asks
 * {@link #stillOwns} before each batch and {@link #mayStillSend} before each send, and marks what the outlet confirmed
 * with {@link #markPublished}, which reports how many rows it marked: the publisher stops the account when that is
 * short.
 *
 * <p>Backed by {@link FeedOwnership}: a boot owns an account's feed (a row of {@code feed_owners}) while its worker's
 * heartbeat lasts, so a crashed or paused instance loses its accounts within dead-after and another live one takes
 * them (bumping the epoch). The lease is checked by this process's own clock (no round trip while it is valid); once
 * it ran out the account is confirmed in the database, and given up if it changed hands. The mark is fenced by owner
 * and epoch, so a boot that woke up after losing the account marks nothing. An account stays this boot's between
 * turns; a clean stop gives them all up ({@link #releaseAll}).
 */
final class AccountOwnership {
    private final FeedOwnership owners;

    AccountOwnership(FeedOwnership owners) {
        this.owners = owners;
    }

    /** Takes or confirms the account for this turn: its lease, or null when another live instance publishes it. */
    FeedOwnership.Lease take(Connection c, long account) throws SQLException {
        return owners.take(c, account);
    }

    /**
     * Asked before each batch: the lease to send it under (the same while valid by this process's clock, else
     * confirmed in the database), or null, which ends the turn (the account is someone else's now).
     */
    FeedOwnership.Lease stillOwns(Connection c, FeedOwnership.Lease lease) throws SQLException {
        return owners.renewed(c, lease);
    }

    /** Asked before each send of a batch, by this process's clock alone: false stops handing changes over. */
    boolean mayStillSend(FeedOwnership.Lease lease) {
        return owners.valid(lease);
    }

    /** Marks the confirmed changes published, fenced by the lease's owner and epoch. Returns how many it marked. */
    int markPublished(Connection c, FeedOwnership.Lease lease, Collection<Long> changeIds) throws SQLException {
        return owners.markPublished(c, lease, changeIds);
    }

    /** Of {@code accounts}, those no other live instance owns (the backstop offers only these). */
    List<Long> notHeldByOthers(Connection c, Collection<Long> accounts) throws SQLException {
        return owners.notHeldByOthers(c, accounts);
    }

    /** Gives up every account this boot owns (a clean stop): the other instances take them at once. */
    int releaseAll(Connection c) throws SQLException {
        return owners.releaseAll(c);
    }
}
