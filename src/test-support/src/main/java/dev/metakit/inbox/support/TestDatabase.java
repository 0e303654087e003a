package dev.metakit.inbox.support;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One real PostgreSQL per test JVM: embedded by default, or a database of its own on the server named by
 * {@code METAKIT_TEST_DATABASE_URL} ({@link ExternalTestServer}: created for the run, dropped after). Never the
 * production settings: {@code DATABASE_URL} and {@code METAKIT_DATABASE_URL} are not read here, because the tests
 * empty every table. The schema is migrated once; {@link #truncateAll()} gives each test a clean slate. Its
 * connections, like the bundle's, resolve table names in the bundle's schema; the schema and its migrations are the
 * tests' ({@link TestDatabaseSchema}: the bundle's tests bring the bundle's).
 */
public final class TestDatabase {
    private static final int TRUNCATE_ATTEMPTS = 5;
    /** deadlock_detected and lock_not_available (the lock timeout). */
    private static final Set<String> LOCK_CONFLICTS = Set.of("40P01", "55P03");

    private static EmbeddedPostgres embedded;
    private static ExternalTestServer external;
    private static DataSource dataSource;
    /**
     * The connections of the one-statement helpers below ({@link #scalar}, {@link #exec}, {@link #rows}, ...): tests
     * poll with them, and a session of its own for each call was a PostgreSQL backend started and ended each time
     * (half or more of the bundle's test run's sessions; the run takes about a tenth less CPU with the pool).
     * {@link #dataSource()} itself still hands out a new session each time: a test that sets something on its
     * connection, holds a lock or ends sessions keeps that to itself.
     */
    private static HikariDataSource helpers;
    private static String jdbcUrl;
    private static String user;
    private static String password;
    private static TestDatabaseSchema schema;

    private TestDatabase() {
    }

    public static synchronized DataSource dataSource() {
        if (dataSource == null) {
            schema = TestDatabaseSchema.loaded();
            external = ExternalTestServer.fromEnvironment(System::getenv).orElse(null);
            if (external != null) {
                Runtime.getRuntime().addShutdownHook(new Thread(external::dropCreated, "test-database-drop"));
                jdbcUrl = external.createDatabase();
                user = external.user();
                password = external.password();
                var pg = new org.postgresql.ds.PGSimpleDataSource();
                pg.setUrl(jdbcUrl);
                pg.setUser(user);
                pg.setPassword(password);
                pg.setCurrentSchema(schema.name());
                dataSource = pg;
            } else {
                try {
                    embedded = EmbeddedPostgres.builder().setPort(TestPorts.free()).start();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                jdbcUrl = embedded.getJdbcUrl("postgres", "postgres");
                user = "postgres";
                password = null;
                dataSource = embedded.getPostgresDatabase(Map.of("currentSchema", schema.name()));
            }
            schema.migrate(dataSource);
            helpers = helperPool(dataSource);
        }
        return dataSource;
    }

    private static HikariDataSource helperPool(DataSource sessions) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("test-database-helpers");
        config.setDataSource(sessions);
        config.setMaximumPoolSize(8);
        config.setMinimumIdle(0);
        config.setIdleTimeout(10_000);
        return new HikariDataSource(config);
    }

    /**
     * A connection for one helper statement on {@code on}: from the helpers' pool when {@code on} is the test
     * database, never one whose session has ended since (a test that terminates sessions or restarts the server).
     */
    private static Connection connection(DataSource on) throws SQLException {
        if (on != dataSource()) {
            return on.getConnection();
        }
        Connection pooled = helpers.getConnection();
        if (pooled.isValid(5)) {
            return pooled;
        }
        helpers.evictConnection(pooled);
        return helpers.getConnection();
    }

    /**
     * Another new, empty database on the test server (no schema), for a test that needs one of its own; on an
     * external server it is dropped with the run's. Returns its JDBC URL (user and password: {@link #user()},
     * {@link #password()}).
     */
    public static synchronized String createDatabase() {
        dataSource();
        if (external != null) {
            return external.createDatabase();
        }
        String name = "metakit_test_" + Long.toHexString(System.nanoTime());
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("create database " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create a database on the embedded test server", e);
        }
        return embedded.getJdbcUrl("postgres", name);
    }

    /** A JDBC URL that a separately configured component (or a child process) can use. */
    public static String jdbcUrl() {
        dataSource();
        return jdbcUrl;
    }

    /**
     * {@link #jdbcUrl()} with the connections named (PostgreSQL's {@code application_name}): how a test tells which
     * of several instances on one database did what.
     */
    public static String jdbcUrl(String applicationName) {
        String url = jdbcUrl();
        return url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + applicationName;
    }

    public static String user() {
        dataSource();
        return user;
    }

    public static String password() {
        dataSource();
        return password;
    }

    /** The first column of the first row of a query, as a long. */
    public static long scalar(String sql) {
        return scalar(dataSource(), sql);
    }

    /** The first column of the first row of a query, as a long, on any database. */
    public static long scalar(DataSource on, String sql) {
        return firstColumn(on, sql, rs -> rs.getLong(1));
    }

    /** The first column of the first row of a query, as a string (null for SQL NULL). */
    public static String text(String sql) {
        return firstColumn(dataSource(), sql, rs -> rs.getString(1));
    }

    /** The first column of the first row of a query, as a string, on any database. */
    public static String text(DataSource on, String sql) {
        return firstColumn(on, sql, rs -> rs.getString(1));
    }

    /** The first column of the first row of a query, a timestamp, as an instant (null for SQL NULL). */
    public static Instant instant(String sql) {
        return firstColumn(dataSource(), sql, rs -> {
            OffsetDateTime t = rs.getObject(1, OffsetDateTime.class);
            return t == null ? null : t.toInstant();
        });
    }

    /**
     * The database's clock now: a test that reads a time the database wrote (a retry time, a lease) takes it before
     * and after the write, and asserts that time between the two, whatever the machine's speed.
     */
    public static Instant clock() {
        return instant("select clock_timestamp()");
    }

    private interface Column<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private static <T> T firstColumn(DataSource on, String sql, Column<T> column) {
        try (Connection c = connection(on); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return column.read(rs);
        } catch (SQLException e) {
            throw new IllegalStateException("query failed: " + sql, e);
        }
    }

    /** Runs one statement on the test database. */
    public static void exec(String sql) {
        exec(dataSource(), sql);
    }

    /** Runs one statement on any database. */
    public static void exec(DataSource on, String sql) {
        try (Connection c = connection(on); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("statement failed: " + sql, e);
        }
    }

    /**
     * Every row of a query on the test database, its {@code ?} bound to these parameters in order, each row a map
     * from column name to value in the columns' order.
     */
    public static List<Map<String, Object>> rows(String sql, Object... parameters) {
        try (Connection c = connection(dataSource()); PreparedStatement s = c.prepareStatement(sql)) {
            bind(s, parameters);
            try (ResultSet rs = s.executeQuery()) {
                return maps(rs);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("query failed: " + sql, e);
        }
    }

    /**
     * Binds a statement's {@code ?} to these parameters in order, each as the driver maps its Java type (a null as a
     * value of no stated type, which the statement's context gives one).
     */
    public static void bind(PreparedStatement s, Object... parameters) throws SQLException {
        for (int i = 0; i < parameters.length; i++) {
            s.setObject(i + 1, parameters[i]);
        }
    }

    /** Every row of a query, each a map from column name to value in the columns' order, on any database. */
    public static List<Map<String, Object>> rows(DataSource on, String sql) {
        try (Connection c = connection(on); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            return maps(rs);
        } catch (SQLException e) {
            throw new IllegalStateException("query failed: " + sql, e);
        }
    }

    private static List<Map<String, Object>> maps(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        List<Map<String, Object>> rows = new ArrayList<>();
        while (rs.next()) {
            Map<String, Object> row = new LinkedHashMap<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                row.put(md.getColumnName(i), rs.getObject(i));
            }
            rows.add(row);
        }
        return rows;
    }

    /** The first column of every row of a query, as strings, on any database. */
    public static Set<String> strings(DataSource on, String sql) {
        try (Connection c = connection(on); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            Set<String> values = new HashSet<>();
            while (rs.next()) {
                values.add(rs.getString(1));
            }
            return values;
        } catch (SQLException e) {
            throw new IllegalStateException("query failed: " + sql, e);
        }
    }

    /**
     * Empties every table of the test database's schema except the schema histories (the bundle's and Flyway's
     * default): tables added by a new migration are emptied too. Only ever the database this class made (a fresh
     * embedded server, or a database it created).
     *
     * <p>TRUNCATE takes its tables' locks one after the other, so a session still working on them (an inbox a test
     * has not yet closed, a worker finishing its claim) can deadlock with it; PostgreSQL then aborts one side. The
     * truncation waits for its locks a bounded time and is tried again; when it still cannot have them it fails
     * naming the sessions that hold them, which is the test that left them running.
     */
    public static void truncateAll() {
        SQLException last = null;
        for (int attempt = 1; attempt <= TRUNCATE_ATTEMPTS; attempt++) {
            try {
                truncateOnce();
                return;
            } catch (SQLException e) {
                if (e.getSQLState() == null || !LOCK_CONFLICTS.contains(e.getSQLState())) {
                    throw new IllegalStateException("could not truncate the test database", e);
                }
                last = e;
                System.err.println("truncateAll: attempt " + attempt + " met " + e.getMessage().lines().findFirst()
                        .orElse("") + "; other sessions: " + otherSessions());
            }
        }
        throw new IllegalStateException("could not truncate the test database: its tables stay locked by "
                + otherSessions(), last);
    }

    private static void truncateOnce() throws SQLException {
        try (Connection c = connection(dataSource()); Statement s = c.createStatement()) {
            // one transaction, so that the lock timeout stays with it and not with the pooled session
            c.setAutoCommit(false);
            s.execute("set local lock_timeout = '5s'");
            s.execute("""
                    do $$
                    declare tables text;
                    begin
                      select string_agg(format('%I', tablename), ', ') into tables from pg_tables
                       where schemaname = current_schema()
                         and tablename not in ('flyway_schema_history', ':bundle_history');
                      if tables is not null then
                        execute 'truncate ' || tables;
                      end if;
                    end $$""".replace(":bundle_history", schema.historyTable()));
            c.commit();
        }
    }

    private static List<String> otherSessions() {
        List<String> sessions = new ArrayList<>();
        try (Connection c = connection(dataSource()); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("""
                     select pid, application_name, state, left(query, 120) from pg_stat_activity
                      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
                     """)) {
            while (rs.next()) {
                sessions.add(rs.getInt(1) + " '" + rs.getString(2) + "' " + rs.getString(3) + ": " + rs.getString(4));
            }
        } catch (SQLException e) {
            sessions.add("(not listed: " + e.getMessage() + ")");
        }
        return sessions;
    }

    /**
     * Waits until the test's PostgreSQL server has been up for longer than {@code silence}. A start of PostgreSQL counts
     * as a beat of every boot ({@code InstanceLiveness}), so a test that makes a boot look silent for that long (its
     * heartbeat set back) finds it dead only then: on a server its JVM just started, not at once.
     */
    public static void upLongerThan(java.time.Duration silence) {
        dataSource();
        org.awaitility.Awaitility.await().atMost(silence.multipliedBy(2).plusSeconds(5))
                .pollInterval(java.time.Duration.ofMillis(200))
                .until(() -> scalar("select count(*) where pg_postmaster_start_time() < now() - interval '"
                        + silence.toMillis() + " milliseconds'") > 0);
    }

    /**
     * A plain DataSource on a database of the test server (a test's own migrations and queries), its connections on
     * the server's default {@code search_path} (public), as a host's are.
     */
    public static DataSource on(String url, String user, String password) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser(user);
        ds.setPassword(password);
        return ds;
    }
}
