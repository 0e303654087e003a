package dev.metakit.inbox.feed;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * Wakes the publisher when a change commits: {@code LISTEN} on {@link ChangeStore#CHANNEL}, on a connection of its
 * own taken from the feed's DataSource and held while it listens. {@link ChangeStore#append} announces the account in
 * the reconcile's transaction, so PostgreSQL delivers the wakeup exactly when the change is committed and readable.
 *
 * <p>The connection recovers by itself: when it breaks (a database outage, a terminated backend, a network gone
 * quiet: a silent connection is checked every {@link #CHECK_AFTER_MILLIS} with a network timeout), the listener
 * retries with a growing pause, and once listening again asks for a look at every account, since what committed
 * meanwhile announced itself to nobody. The publisher's poll stays as the backstop for the time in between.
 * A DataSource behind a pooler in transaction mode (PgBouncer) cannot LISTEN: then the poll alone publishes.
 */
final class FeedWakeups implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FeedWakeups.class);
    /** How long one wait for notifications lasts: also how long {@link #close()} may wait for the thread. */
    private static final int WAIT_MILLIS = 500;
    static final long CHECK_AFTER_MILLIS = 10_000;
    private static final int NETWORK_TIMEOUT_MILLIS = 5_000;
    private static final long RETRY_MIN_MILLIS = 100;
    private static final long RETRY_MAX_MILLIS = 5_000;

    private final DataSource dataSource;
    private final LongConsumer wakeAccount;
    private final Runnable wakeAll;
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean listening;

    /**
     * @param wakeAccount told each account announced (in the listener's thread: it must not block)
     * @param wakeAll     told when any account may have changes: on (re)connecting, or an announcement without one
     */
    FeedWakeups(DataSource dataSource, LongConsumer wakeAccount, Runnable wakeAll) {
        this.dataSource = dataSource;
        this.wakeAccount = wakeAccount;
        this.wakeAll = wakeAll;
        this.thread = new Thread(this::run, "metakit-feed-listener");
        thread.setDaemon(true);
    }

    FeedWakeups start() {
        thread.start();
        return this;
    }

    /** Whether the listener holds a working LISTEN now. */
    boolean listening() {
        return listening;
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        thread.interrupt();
        thread.join(TimeUnit.SECONDS.toMillis(5));
    }

    private void run() {
        long retry = RETRY_MIN_MILLIS;
        boolean down = false;
        while (!closed) {
            try (Connection c = dataSource.getConnection()) {
                listen(c);
                if (down) {
                    LOG.info("Feed: listening for committed changes again");
                    down = false;
                }
                retry = RETRY_MIN_MILLIS;
                wakeAll.run();
                receive(c);
            } catch (SQLException | RuntimeException e) {
                listening = false;
                if (closed) {
                    return;
                }
                if (!down) {
                    LOG.warn("Feed: cannot listen for committed changes, retrying (the poll publishes meanwhile): {}",
                            e.getMessage());
                    down = true;
                }
                try {
                    Thread.sleep(retry); // a pause between reconnects, not a wait for a condition
                } catch (InterruptedException interrupted) {
                    return;
                }
                retry = Math.min(RETRY_MAX_MILLIS, retry * 2);
            }
        }
        listening = false;
    }

    private void listen(Connection c) throws SQLException {
        c.setAutoCommit(true);
        // a half-open connection would otherwise hang the silence check until TCP gives up (minutes)
        c.setNetworkTimeout(DIRECT, NETWORK_TIMEOUT_MILLIS);
        try (Statement s = c.createStatement()) {
            s.execute("listen " + ChangeStore.CHANNEL);
        }
        listening = true;
    }

    private void receive(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        long quietSince = System.nanoTime();
        while (!closed) {
            PGNotification[] received = pg.getNotifications(WAIT_MILLIS);
            if (received == null || received.length == 0) {
                if (System.nanoTime() - quietSince > TimeUnit.MILLISECONDS.toNanos(CHECK_AFTER_MILLIS)) {
                    try (Statement s = c.createStatement()) {
                        s.execute("select 1"); // throws if the connection is gone
                    }
                    quietSince = System.nanoTime();
                }
                continue;
            }
            quietSince = System.nanoTime();
            boolean all = false;
            for (PGNotification n : received) {
                String payload = n.getParameter();
                if (payload == null || payload.isEmpty()) {
                    all = true;
                    continue;
                }
                try {
                    wakeAccount.accept(Long.parseLong(payload));
                } catch (NumberFormatException e) {
                    all = true; // someone else's announcement on our channel: look at everything
                }
            }
            if (all) {
                wakeAll.run();
            }
        }
    }

    /** setNetworkTimeout wants an executor for aborting; the driver only uses it to close the socket. */
    private static final Executor DIRECT = Runnable::run;
}
