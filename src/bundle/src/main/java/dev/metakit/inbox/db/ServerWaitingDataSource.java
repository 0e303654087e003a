package dev.metakit.inbox.db;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;

/**
 * The pool's way to the server: a connection attempt refused because the server is down (or still starting up) is
 * tried again every {@value #RETRY_MILLIS} ms for up to {@code patience}, instead of failing at once. HikariCP
 * backs off after each failed attempt, doubling up to 5 s: after an outage of more than a few seconds its next
 * attempt could come up to 5 s after the server is back, and every request and outcome waits for it. Waiting here
 * keeps the attempts failing slowly, so the backoff stays short and the first connection comes within
 * {@value #RETRY_MILLIS} ms of the server's return. Other failures (a wrong password, an unknown database) are
 * reported at once.
 */
final class ServerWaitingDataSource implements ForwardingDataSource {
    static final long RETRY_MILLIS = 200;

    private final DataSource server;
    private final Duration patience;
    private volatile boolean closed;

    ServerWaitingDataSource(DataSource server, Duration patience) {
        this.server = server;
        this.patience = patience;
    }

    /** The pool closes: attempts in progress give up. */
    void close() {
        closed = true;
    }

    @Override
    public Connection getConnection() throws SQLException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            try {
                return server.getConnection();
            } catch (SQLException e) {
                if (!serverNotThere(e) || closed || System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                try {
                    Thread.sleep(RETRY_MILLIS);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** 08001/08006 (cannot connect, connection failure), 57P03 (the server is starting up or recovering). */
    static boolean serverNotThere(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.equals("08001") || state.equals("08006") || state.equals("57P03"));
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("the credentials are the server data source's");
    }

    @Override
    public DataSource target() {
        return server;
    }
}
