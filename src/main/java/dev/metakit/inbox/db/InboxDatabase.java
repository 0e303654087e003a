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
import java.util.HashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.Map;

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


    /**
     * Camel's YAML loader creates the beans of a route file twice under camel-main (an eager pre-parse, whose beans it
     * destroys, then the real load), calling {@code initMethod} and {@code destroyMethod} on the first. One database
     * per configuration and JVM is shared by reference count, and released only a few seconds after its last user
     * let go, so the twin does not start and stop a pool, and a PostgreSQL, in vain.
     */
    private static final Map<String, Shared> STARTED = new HashMap<>();
    private static final long RELEASE_GRACE_MILLIS = 5000;
    private static final ScheduledExecutorService RELEASER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "inbox-database-release");
        t.setDaemon(true);
        return t;
    });

    private static final class Shared {
        EmbeddedPostgres embedded;
        HikariDataSource pool;
        ServerWaitingDataSource connector;
        int references;
        ScheduledFuture<?> pendingRelease;
    }

    private Shared shared;
    private String key;

    public void start() {
        DatabaseSettings settings = DatabaseSettings.parse(url, user, password);
        key = settings.embedded() ? "embedded:" + Path.of(embeddedDataDirectory).toAbsolutePath().normalize()
                : settings.jdbcUrl() + "|" + settings.user() + "|" + poolSize;
        synchronized (STARTED) {
            Shared existing = STARTED.get(key);
            if (existing != null) {
                existing.references++;
                if (existing.pendingRelease != null) {
                    existing.pendingRelease.cancel(false);
                    existing.pendingRelease = null;
                }
                shared = existing;
                return;
            }
            Shared created = new Shared();
            HikariConfig config = new HikariConfig();
            org.postgresql.ds.PGSimpleDataSource server = new org.postgresql.ds.PGSimpleDataSource();
            if (settings.embedded()) {
                created.embedded = startEmbedded(Path.of(embeddedDataDirectory));
                server.setUrl(created.embedded.getJdbcUrl("postgres", "postgres"));
                server.setUser("postgres");
            } else {
                server.setUrl(settings.jdbcUrl());
                server.setUser(settings.user());
                server.setPassword(settings.password());
            }
            config.setPoolName("metakit-inbox");
            config.setMaximumPoolSize(poolSize);
            config.setConnectionTimeout(connectionTimeoutMillis);
            config.setValidationTimeout(Math.min(1000, connectionTimeoutMillis));
            // no connection at construction: a database that is down at startup is reported by migrate() below
            config.setInitializationFailTimeout(-1);
            // a dead server must not hang a request past MetaKit's 5 s timeout
            server.setConnectTimeout(2);
            server.setSocketTimeout(30);
            server.setTcpKeepAlive(true);
            // the pool reconnects within moments of the server's return, whatever the outage's length
            created.connector = new ServerWaitingDataSource(server, Duration.ofSeconds(30));
            config.setDataSource(created.connector);
            created.pool = new HikariDataSource(config);
            try {
                migrate(created.pool, settings);
            } catch (RuntimeException e) {
                release(created);
                throw e;
            }
            created.references = 1;
            STARTED.put(key, created);
            shared = created;
        }
        LOG.info("Database ready: {}", settings.embedded() ? "embedded PostgreSQL, data in " + embeddedDataDirectory
                : settings.describe());
    }

    private static void migrate(HikariDataSource pool, DatabaseSettings settings) {
        try {
            // Flyway takes a PostgreSQL advisory lock: instances starting together migrate once
            Flyway.configure().dataSource(pool).locations("classpath:db/migration")
                    .connectRetries(0).load().migrate();
        } catch (RuntimeException e) {
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
                    // the library's defaults are for throwaway test databases (fsync and synchronous_commit off);
                    // a delivery acknowledged by this one must survive a crash
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
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
        synchronized (STARTED) {
            if (shared == null) {
                return;
            }
            Shared s = shared;
            shared = null;
            if (--s.references <= 0) {
                String k = key;
                s.pendingRelease = RELEASER.schedule(() -> {
                    synchronized (STARTED) {
                        if (s.references <= 0 && STARTED.get(k) == s) {
                            STARTED.remove(k);
                            release(s);
                        }
                    }
                }, RELEASE_GRACE_MILLIS, TimeUnit.MILLISECONDS);
            }
        }
    }

    private static void release(Shared s) {
        s.connector.close();
        s.pool.close();
        if (s.embedded != null) {
            try {
                s.embedded.close();
            } catch (IOException e) {
                LOG.warn("Embedded PostgreSQL did not stop cleanly: {}", e.getMessage());
            }
        }
    }

    private HikariDataSource pool() {
        Shared s = shared;
        if (s == null) {
            throw new IllegalStateException("InboxDatabase is not started");
        }
        return s.pool;
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
