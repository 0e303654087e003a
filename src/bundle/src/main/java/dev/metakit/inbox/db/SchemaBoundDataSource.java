package dev.metakit.inbox.db;

import com.zaxxer.hikari.HikariDataSource;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A host's DataSource as the bundle uses it: every connection borrowed has the bundle's schema as its
 * {@code search_path}, and gets its own back before it returns to the host's pool, so the host's next borrower sees
 * the connection as the host left it. The bundle's own pool needs none of this (pgjdbc's {@code currentSchema} sets
 * the path when a connection is made); on a host's pool it costs a round trip when a connection is borrowed and one
 * when it is given back.
 * <p>
 * A connection whose path could not be given back (the server went away, say) is aborted, so the pool discards it
 * instead of handing it to the host with the bundle's path.
 */
final class SchemaBoundDataSource implements ForwardingDataSource {
    /** the old path and the new in one statement: the select list is evaluated in order */
    private static final String BIND = "select current_setting('search_path'), set_config('search_path', ?, false)";
    private static final String RESTORE = "select set_config('search_path', ?, false)";

    private final DataSource host;
    private final InboxSchema schema;

    SchemaBoundDataSource(DataSource host, InboxSchema schema) {
        this.host = host;
        this.schema = schema;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return bind(host.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return bind(host.getConnection(username, password));
    }

    private Connection bind(Connection c) throws SQLException {
        String hostPath;
        try (PreparedStatement s = c.prepareStatement(BIND)) {
            s.setString(1, schema.quoted());
            try (ResultSet r = s.executeQuery()) {
                r.next();
                hostPath = r.getString(1);
            }
            if (!c.getAutoCommit()) {
                // a pool that lends connections outside autocommit: the path must outlive a rollback of the bundle's
                c.commit();
            }
        } catch (SQLException | RuntimeException e) {
            discard(c);
            throw e;
        }
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                new Bound(c, hostPath));
    }

    /** Gives the host's path back, then the connection. */
    private void release(Connection c, String hostPath) throws SQLException {
        try {
            if (!c.getAutoCommit()) {
                // what the bundle left uncommitted is rolled back by the pool anyway; the restore must not go with
                // it, nor wait for a commit (the pool puts its own autocommit back, as after any borrower)
                c.rollback();
                c.setAutoCommit(true);
            }
            try (PreparedStatement s = c.prepareStatement(RESTORE)) {
                s.setString(1, hostPath);
                s.execute();
            }
        } catch (SQLException | RuntimeException e) {
            discard(c);
            return;
        }
        c.close();
    }

    /** The pool drops the connection rather than lend it with the bundle's path. */
    private void discard(Connection c) {
        try {
            if (host.isWrapperFor(HikariDataSource.class)) {
                host.unwrap(HikariDataSource.class).evictConnection(c);
                return;
            }
            c.abort(Runnable::run);
        } catch (SQLException | RuntimeException | AbstractMethodError e) {
            // a pool that cannot abort: closing is all that is left
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            // already gone
        }
    }

    private final class Bound implements InvocationHandler {
        private final Connection target;
        private final String hostPath;
        private boolean closed;

        Bound(Connection target, String hostPath) {
            this.target = target;
            this.hostPath = hostPath;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
                case "close":
                    if (!closed) {
                        closed = true;
                        release(target, hostPath);
                    }
                    return null;
                case "isClosed":
                    return closed || target.isClosed();
                case "unwrap":
                    return ((Class<?>) args[0]).isInstance(proxy) ? proxy : target.unwrap((Class<?>) args[0]);
                case "isWrapperFor":
                    return ((Class<?>) args[0]).isInstance(proxy) || target.isWrapperFor((Class<?>) args[0]);
                case "equals":
                    return proxy == args[0];
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "toString":
                    return "bound to the bundle's schema: " + target;
                default:
                    if (closed) {
                        throw new SQLException("connection closed");
                    }
                    try {
                        return method.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
            }
        }
    }

    @Override
    public DataSource target() {
        return host;
    }
}
