package dev.metakit.inbox.support;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.logging.Logger;

/**
 * A DataSource that lends one connection again and again, its close ignored: code under test runs its statements in
 * the test's own transaction, where the test reads what they did (pg_stat_xact_*) and rolls it back.
 */
public final class OneConnection {
    private final Connection connection;

    public OneConnection(Connection connection) {
        this.connection = connection;
    }

    public DataSource dataSource() {
        Connection lent = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return new DataSource() {
            @Override public Connection getConnection() { return lent; }
            @Override public Connection getConnection(String user, String password) { return lent; }
            @Override public PrintWriter getLogWriter() { return null; }
            @Override public void setLogWriter(PrintWriter out) { }
            @Override public void setLoginTimeout(int seconds) { }
            @Override public int getLoginTimeout() { return 0; }
            @Override public Logger getParentLogger() { return Logger.getGlobal(); }
            @Override public <T> T unwrap(Class<T> iface) { throw new UnsupportedOperationException(); }
            @Override public boolean isWrapperFor(Class<?> iface) { return false; }
        };
    }
}
