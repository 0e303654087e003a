package dev.metakit.inbox.feed;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Who may publish an account: the publisher asks here alone. A turn {@link #take}s the account on the connection it
 * publishes with, asks {@link #stillOwns} before each batch, and {@link #release}s it at the end; the statement that
 * marks a batch published ({@link ChangeStore#markPublished}) reports how many rows it marked, and the publisher
 * stops the account when that is short, so a fencing condition added there ends a publisher that lost the account.
 *
 * <p>Today: one session advisory lock per account ({@link AccountPublishLock}), held by the turn's connection. Every
 * statement of the turn runs on that connection, so while they succeed the lock is held: nothing to ask per batch.
 */
final class AccountOwnership {
    private static final Logger LOG = LoggerFactory.getLogger(AccountOwnership.class);

    /** Takes the account for this turn; false when another instance publishes it. */
    boolean take(Connection c, long account) throws SQLException {
        return AccountPublishLock.tryLock(c, account);
    }

    /** Asked before each batch: false stops the turn (the account is someone else's now). */
    boolean stillOwns(Connection c, long account) {
        return true;
    }

    void release(Connection c, long account) throws SQLException {
        if (!AccountPublishLock.unlock(c, account)) {
            LOG.warn("Feed: the publish lock of account {} was not held at its release", account);
        }
    }
}
