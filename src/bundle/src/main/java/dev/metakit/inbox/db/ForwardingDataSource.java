package dev.metakit.inbox.db;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;

/**
 * A DataSource that hands connections out its own way and leaves the rest of the interface to the one it stands in
 * front of ({@link #target()}): its log writer, login timeout and parent logger, and what it wraps.
 */
public interface ForwardingDataSource extends DataSource {
    /** The DataSource this one stands in front of. */
    DataSource target();

    @Override
    default PrintWriter getLogWriter() throws SQLException {
        return target().getLogWriter();
    }

    @Override
    default void setLogWriter(PrintWriter out) throws SQLException {
        target().setLogWriter(out);
    }

    @Override
    default void setLoginTimeout(int seconds) throws SQLException {
        target().setLoginTimeout(seconds);
    }

    @Override
    default int getLoginTimeout() throws SQLException {
        return target().getLoginTimeout();
    }

    @Override
    default Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return target().getParentLogger();
    }

    @Override
    default <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : target().unwrap(iface);
    }

    @Override
    default boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || target().isWrapperFor(iface);
    }
}
