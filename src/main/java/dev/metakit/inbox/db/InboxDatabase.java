package dev.metakit.inbox.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.config.ConfigurationException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;

/**
 * The bundle's own DataSource: a HikariCP pool on the configured PostgreSQL, or on an embedded one when no URL is
 * set, with the schema migrated by Flyway before the first connection is handed out. Declared as a bean in
 * {@code routes/beans.camel.yaml}; a host platform with its own DataSource can bind that one under the same name.
 */
public class InboxDatabase implements DataSource, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(InboxDatabase.class);

    private String url;
    private String user;
    private String password;
    private String embeddedDataDirectory = "data/postgres";
    private int poolSize = 16;
    private long connectionTimeoutMillis = 2000;

    private EmbeddedPostgres embedded;
    private HikariDataSource pool;

    public void start() {
        DatabaseSettings settings = DatabaseSettings.parse(url, user, password);
        HikariConfig config = new HikariConfig();
        if (settings.embedded()) {
            embedded = startEmbedded(Path.of(embeddedDataDirectory));
            config.setJdbcUrl(embedded.getJdbcUrl("postgres", "postgres"));
            config.setUsername("postgres");
        } else {
            config.setJdbcUrl(settings.jdbcUrl());
            config.setUsername(settings.user());
            config.setPassword(settings.password());
        }
        config.setPoolName("metakit-inbox");
        config.setMaximumPoolSize(poolSize);
        config.setConnectionTimeout(connectionTimeoutMillis);
        config.setValidationTimeout(Math.min(1000, connectionTimeoutMillis));
        // no connection at construction: a database that is down at startup is reported by migrate() below
        config.setInitializationFailTimeout(-1);
        // a dead server must not hang a request past MetaKit's 5 s timeout
        config.addDataSourceProperty("connectTimeout", "2");
        config.addDataSourceProperty("socketTimeout", "30");
        config.addDataSourceProperty("tcpKeepAlive", "true");
        pool = new HikariDataSource(config);
        migrate(settings);
        LOG.info("Database ready: {}", embedded != null ? "embedded PostgreSQL, data in " + embeddedDataDirectory
                : settings.describe());
    }

    private void migrate(DatabaseSettings settings) {
        try {
            // Flyway takes a PostgreSQL advisory lock: instances starting together migrate once
            Flyway.configure().dataSource(pool).locations("classpath:db/migration")
                    .connectRetries(0).load().migrate();
        } catch (RuntimeException e) {
            close();
            throw new ConfigurationException("database " + settings.describe() + " is not usable: "
                    + rootMessage(e), e);
        }
    }

    private static EmbeddedPostgres startEmbedded(Path dataDirectory) {
        try {
            Files.createDirectories(dataDirectory);
            return EmbeddedPostgres.builder()
                    .setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(false)
                    .setPGStartupWait(Duration.ofSeconds(30))
                    .start();
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException("embedded PostgreSQL did not start in " + dataDirectory.toAbsolutePath()
                    + ": " + rootMessage(e), e);
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return message.lines().findFirst().orElse(message);
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.close();
            pool = null;
        }
        if (embedded != null) {
            try {
                embedded.close();
            } catch (IOException e) {
                LOG.warn("Embedded PostgreSQL did not stop cleanly: {}", e.getMessage());
            }
            embedded = null;
        }
    }

    private HikariDataSource pool() {
        if (pool == null) {
            throw new IllegalStateException("InboxDatabase is not started");
        }
        return pool;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return pool().getConnection();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return pool().getConnection(username, password);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return pool().getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        pool().setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        pool().setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return pool().getLoginTimeout();
    }

    @Override
    public java.util.logging.Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : pool().unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || pool().isWrapperFor(iface);
    }

    public void setUrl(String url) { this.url = url; }
    public void setUser(String user) { this.user = user; }
    public void setPassword(String password) { this.password = password; }
    public void setEmbeddedDataDirectory(String dir) { this.embeddedDataDirectory = dir; }
    public void setPoolSize(int poolSize) { this.poolSize = poolSize; }
    public void setConnectionTimeoutMillis(long millis) { this.connectionTimeoutMillis = millis; }
}
