package dev.metakit.inbox.ingest;

import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The inserts under way, and their cancel sent again while one runs past its deadline. An insert's query timeout
 * cancels it at the deadline, but PostgreSQL drops a cancel that reaches the backend before the statement does (the
 * backend is still reading the command): a writer descheduled between the driver's timer start and its send, on a
 * loaded machine, leaves an insert without a deadline, holding its writer and committing rows already answered 503
 * whenever the database lets it. The cancel goes on a thread of its own (it opens a connection to the server, which
 * a lost network holds for the driver's cancel timeout), never the deadline watch's.
 */
final class LateInsertCancels implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LateInsertCancels.class);
    /** how long past its deadline an insert runs before its cancel is sent again, and between two sends */
    static final long AGAIN_AFTER_MILLIS = 250;

    private final Set<Running> running = ConcurrentHashMap.newKeySet();
    private final ExecutorService sender = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "inbox-insert-cancels");
        t.setDaemon(true);
        return t;
    });

    /** One insert under way on {@code connection}, cancelled at {@code deadlineNanos}; closed once it returned. */
    final class Running implements AutoCloseable {
        private final Connection connection;
        private final int deliveries;
        private final long deadlineNanos;
        private volatile long nextSendNanos;
        private final AtomicBoolean sending = new AtomicBoolean();
        private boolean returned;
        private boolean warned;

        private Running(Connection connection, int deliveries, long deadlineNanos) {
            this.connection = connection;
            this.deliveries = deliveries;
            this.deadlineNanos = deadlineNanos;
            this.nextSendNanos = deadlineNanos + TimeUnit.MILLISECONDS.toNanos(AGAIN_AFTER_MILLIS);
        }

        /** Under the lock a send takes: once this returns, no cancel is sent on a connection handed back. */
        @Override
        public void close() {
            running.remove(this);
            synchronized (this) {
                returned = true;
            }
        }

        private synchronized void sendCancel() {
            if (returned) {
                return;
            }
            long late = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - deadlineNanos);
            if (!warned) {
                warned = true;
                LOG.warn("Inbox insert of {} deliveries still running {} ms past its deadline: its cancel is sent"
                        + " again (the first reached the database before the statement, or the connection is lost)",
                        deliveries, late);
            } else {
                LOG.debug("Inbox insert of {} deliveries still running {} ms past its deadline: cancel sent again",
                        deliveries, late);
            }
            try {
                connection.unwrap(PGConnection.class).cancelQuery();
            } catch (SQLException | RuntimeException e) {
                LOG.debug("Cancel of a late inbox insert not sent: {}", e.getMessage());
            }
        }
    }

    /** An insert of {@code deliveries} starts on {@code connection}, to be cancelled at {@code deadlineNanos}. */
    Running begin(Connection connection, int deliveries, long deadlineNanos) {
        Running r = new Running(connection, deliveries, deadlineNanos);
        running.add(r);
        return r;
    }

    /** Sends the cancel again for each insert still running {@link #AGAIN_AFTER_MILLIS} past its deadline. */
    void sendAgainWhereLate(long nowNanos) {
        for (Running r : running) {
            if (nowNanos - r.nextSendNanos > 0 && r.sending.compareAndSet(false, true)) {
                r.nextSendNanos = nowNanos + TimeUnit.MILLISECONDS.toNanos(AGAIN_AFTER_MILLIS);
                try {
                    sender.execute(() -> {
                        try {
                            r.sendCancel();
                        } finally {
                            r.sending.set(false);
                        }
                    });
                } catch (RejectedExecutionException e) {
                    r.sending.set(false); // closing
                }
            }
        }
    }

    @Override
    public void close() {
        sender.shutdownNow();
    }
}
