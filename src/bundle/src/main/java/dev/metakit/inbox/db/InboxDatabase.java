package dev.metakit.inbox.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.config.RootCause;
import dev.metakit.inbox.config.SecretSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.nio.file.Path;
import java.util.ServiceLoader;
import java.time.Duration;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

/**
 * The bundle's DataSource, with the schema migrated by Flyway before the first connection is handed out: a HikariCP
 * pool on the configured PostgreSQL, or on an embedded one when no URL is set, or, when
 * {@code metakit.database.data-source-bean} names one, the host application's own DataSource (a Spring Boot
 * application's pool, say), which it then lends with the bundle's schema as each connection's path
 * ({@link SchemaBoundDataSource}) and never closes. Every connection it hands out resolves the bundle's unqualified
 * table names in the bundle's schema ({@code metakit.database.schema}). Declared as a bean in
 * {@code routes/beans.camel.yaml}; it starts (the pool, the embedded server, the migration) when the CamelContext
 * starts and stops after the routes did.
 */
public class InboxDatabase extends ContextBean implements ForwardingDataSource {
    private static final Logger LOG = LoggerFactory.getLogger(InboxDatabase.class);
    /** a dead server must not hang a request past MetaKit's 5 s timeout */
    private static final long CONNECTION_TIMEOUT_MILLIS = 2000;
    /** per host of the URL: a host that does not answer (black-holed) is given up for the next one after this */
    static final int CONNECT_TIMEOUT_SECONDS = 2;
    /**
     * the longest any read may wait for the server: the last resort against a connection whose packets are dropped
     * for good. Statement timeouts (the ack path's 2 s) are cancel requests the server must receive; this is not.
     * Longer than any statement of the bundle may take (a migration, a retention batch); a dropped-packet freeze
     * shorter than it resumes where it stopped (DroppedPacketsFaultIT)
     */
    static final int SOCKET_TIMEOUT_SECONDS = 30;
    /**
     * a session idle inside a transaction this long is ended by the server (see applyConnectionDefaults): less than the
     * worker's dead-after (5 s by default) less a heartbeat, so the row locks of a process frozen mid-transaction are
     * gone by the time another instance may take its accounts over
     */
    static final int IDLE_IN_TRANSACTION_SECONDS = 4;

    private String url;
    private String user;
    private String password;
    private String embeddedDataDirectory;
    private Integer poolSize;
    private String hostDataSourceBean;
    private InboxSchema schema = InboxSchema.of(null);

    private volatile DataSource active;
    private EmbeddedPostgreSQL embedded;
    private HikariDataSource pool;
    private ServerWaitingDataSource connector;
    /** where the bundle's own pool puts its meters, once the metrics are bound ({@link #measurePoolOn}) */
    private Object meterRegistry;

    private boolean usesHost() {
        return hostDataSourceBean != null && !hostDataSourceBean.isBlank();
    }

    @Override
    protected void checkSettings() {
        if (usesHost()) {
            return;
        }
        Required.setting(poolSize, "metakit.database.pool-size");
        if (url == null || url.isBlank()) {
            Required.setting(embeddedDataDirectory, "metakit.database.embedded-dir");
        }
    }

    @Override
    protected void begin() {
        if (usesHost()) {
            useHostDataSource(hostDataSourceBean.trim());
            return;
        }
        password = SecretSettings.read(getCamelContext(), SecretSettings.DATABASE_PASSWORD, password);
        DatabaseSettings settings = DatabaseSettings.parse(url, user, password);
        HikariConfig config = new HikariConfig();
        org.postgresql.ds.PGSimpleDataSource server = new org.postgresql.ds.PGSimpleDataSource();
        if (settings.embedded()) {
            embedded = startEmbedded(Path.of(embeddedDataDirectory));
            server.setUrl(embedded.jdbcUrl());
            server.setUser("postgres");
        } else {
            server.setUrl(settings.jdbcUrl());
            server.setUser(settings.user());
            server.setPassword(settings.password());
        }
        config.setPoolName("metakit-inbox");
        config.setMaximumPoolSize(poolSize);
        config.setConnectionTimeout(CONNECTION_TIMEOUT_MILLIS);
        config.setValidationTimeout(Math.min(1000, CONNECTION_TIMEOUT_MILLIS));
        // no connection at construction: a database that is down at startup is reported by migrate() below
        config.setInitializationFailTimeout(-1);
        applyConnectionDefaults(server, settings.embedded() ? null : settings.jdbcUrl());
        // the connections as the settings give them, where an earlier build kept its tables (InboxMigrations)
        DataSource asConfigured = copy(server);
        // the bundle's schema on every connection as it is made: no statement per borrow (the ack path's insert
        // is one round trip); it wins over a currentSchema in the URL, the URL being the host's database's
        server.setCurrentSchema(schema.name());
        // the pool reconnects within moments of the server's return, whatever the outage's length
        connector = new ServerWaitingDataSource(server, Duration.ofSeconds(30));
        config.setDataSource(connector);
        pool = new HikariDataSource(config);
        measurePool();
        migrate(pool, asConfigured, schema, settings.describe());
        active = pool;
        LOG.info("Database ready: {}, schema {}", settings.embedded() ? "embedded PostgreSQL, data in "
                + embeddedDataDirectory : settings.describe(), schema);
    }

    /**
     * The bundle's connection settings, each unless the URL sets it ({@code ...?socketTimeout=60}): the URL is the
     * user's, so its values win (docs/deployment.md, "Managed PostgreSQL").
     */
    static void applyConnectionDefaults(org.postgresql.ds.PGSimpleDataSource server, String jdbcUrl) {
        java.util.Properties given = jdbcUrl == null ? new java.util.Properties()
                : org.postgresql.Driver.parseURL(jdbcUrl, null);
        if (given == null) {
            given = new java.util.Properties();
        }
        if (!given.containsKey("connectTimeout")) {
            server.setConnectTimeout(CONNECT_TIMEOUT_SECONDS);
        }
        if (!given.containsKey("socketTimeout")) {
            server.setSocketTimeout(SOCKET_TIMEOUT_SECONDS);
        }
        if (!given.containsKey("tcpKeepAlive")) {
            server.setTcpKeepAlive(true);
        }
        if (!given.containsKey("options")) {
            // A process that stops mid-transaction (SIGSTOP, a VM freeze, a long GC) keeps its row locks while its
            // connection stays open: the instance that takes its accounts over would wait on them for the whole
            // freeze (its account locks stalled that account's reconciles, and with them its feed, and an ingest
            // batch holding a delivery the frozen one was inserting too). The server ends such a session after this
            // long idle inside a transaction; the bundle's transactions make no remote call and never sit idle that
            // long unless their process is stopped, and its claims and feed accounts are free a moment later
            // (dead-after, 5 s by default), with nothing of it left to wait on.
            server.setOptions("-c idle_in_transaction_session_timeout=" + IDLE_IN_TRANSACTION_SECONDS + "s");
        }
    }

    private void useHostDataSource(String beanName) {
        if (getCamelContext() == null) {
            throw new IllegalStateException("InboxDatabase needs its CamelContext to look up '" + beanName + "'");
        }
        DataSource found = getCamelContext().getRegistry().lookupByNameAndType(beanName, DataSource.class);
        if (found == null || found == this) {
            throw new ConfigurationException("metakit.database.data-source-bean names '" + beanName
                    + "', but there is no other DataSource of that name");
        }
        String description = "the host's DataSource '" + beanName + "'";
        // the bundle's migrations and tables in their own schema, beside the host's (InboxMigrations)
        migrate(found, found, schema, description);
        active = new SchemaBoundDataSource(found, schema);
        LOG.info("Database ready: {}, schema {}", description, schema);
    }

    private static void migrate(DataSource dataSource, DataSource asConfigured, InboxSchema schema,
                                String description) {
        try {
            InboxMigrations.migrate(dataSource, asConfigured, schema);
        } catch (ConfigurationException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new ConfigurationException("database " + description + " is not usable: " + RootCause.message(e), e);
        }
    }

    private static org.postgresql.ds.PGSimpleDataSource copy(org.postgresql.ds.PGSimpleDataSource server) {
        org.postgresql.ds.PGSimpleDataSource copy = new org.postgresql.ds.PGSimpleDataSource();
        copy.setUrl(server.getUrl());
        copy.setUser(server.getUser());
        copy.setPassword(server.getPassword());
        return copy;
    }

    private static EmbeddedPostgreSQL startEmbedded(Path dataDirectory) {
        EmbeddedPostgreSQL.Starter starter = ServiceLoader.load(EmbeddedPostgreSQL.Starter.class,
                InboxDatabase.class.getClassLoader()).findFirst().orElseThrow(() -> new ConfigurationException(
                "METAKIT_DATABASE_URL is empty and no embedded PostgreSQL is on the classpath (the standalone "
                        + "runtime, metakit-inbox-runtime, carries one): set METAKIT_DATABASE_URL, or name the "
                        + "application's DataSource in METAKIT_DATABASE_DATA_SOURCE_BEAN"));
        return starter.start(dataDirectory);
    }

    /**
     * The bundle's own pool's meters ({@code hikaricp_connections_*}, tagged {@code pool="metakit-inbox"}) on
     * {@code registry}, a Micrometer MeterRegistry, now and for a pool started later. A host's DataSource is the
     * host's to measure (Spring Boot measures its pools itself).
     */
    public synchronized void measurePoolOn(Object registry) {
        meterRegistry = registry;
        measurePool();
    }

    private synchronized void measurePool() {
        if (pool != null && meterRegistry != null && pool.getMetricRegistry() == null) {
            pool.setMetricRegistry(meterRegistry);
        }
    }

    /** Closes the pool and the embedded server it started; a host's DataSource is the host's to close. */
    @Override
    protected void end() {
        active = null;
        if (connector != null) {
            connector.close();
        }
        if (pool != null) {
            pool.close();
        }
        if (embedded != null) {
            embedded.close();
        }
        connector = null;
        pool = null;
        embedded = null;
    }

    /** The pool of the running bundle (or the host's DataSource), what every other DataSource call goes to. */
    @Override
    public DataSource target() {
        return Optional.ofNullable(active).orElseThrow(
                () -> new IllegalStateException("InboxDatabase is not started (it starts with its CamelContext)"));
    }

    @Override
    public Connection getConnection() throws SQLException {
        return target().getConnection();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return target().getConnection(username, password);
    }

    public void setUrl(String url) { this.url = url; }
    public void setUser(String user) { this.user = user; }
    public void setPassword(String password) { this.password = password; }
    public void setEmbeddedDataDirectory(String dir) { this.embeddedDataDirectory = dir; }
    public void setPoolSize(int poolSize) { this.poolSize = poolSize; }
    /** The name of the host's own DataSource to use instead of a pool of ours; blank: none. */
    public void setHostDataSourceBean(String name) { this.hostDataSourceBean = name; }
    /** The schema of the bundle's tables and migration history; blank: {@value InboxSchema#DEFAULT}. */
    public void setSchema(String schema) { this.schema = InboxSchema.of(schema); }

}
