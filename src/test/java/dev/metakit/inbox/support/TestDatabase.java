package dev.metakit.inbox.support;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.flywaydb.core.Flyway;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * One real PostgreSQL per test JVM: embedded by default, or the one named by {@code DATABASE_URL}
 * (jdbc:postgresql:// form, with DATABASE_USER / DATABASE_PASSWORD). The schema is migrated once;
 * {@link #truncateAll()} gives each test a clean slate.
 */
public final class TestDatabase {
    private static EmbeddedPostgres embedded;
    private static DataSource dataSource;
    private static String jdbcUrl;
    private static String user;
    private static String password;

    private TestDatabase() {
    }

    public static synchronized DataSource dataSource() {
        if (dataSource == null) {
            String external = System.getenv("DATABASE_URL");
            if (external != null && !external.isBlank()) {
                var settings = dev.metakit.inbox.db.DatabaseSettings.parse(external,
                        System.getenv("DATABASE_USER"), System.getenv("DATABASE_PASSWORD"));
                jdbcUrl = settings.jdbcUrl();
                user = settings.user();
                password = settings.password();
                var pg = new org.postgresql.ds.PGSimpleDataSource();
                pg.setUrl(jdbcUrl);
                pg.setUser(user);
                pg.setPassword(password);
                dataSource = pg;
            } else {
                try {
                    embedded = EmbeddedPostgres.builder().start();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                jdbcUrl = embedded.getJdbcUrl("postgres", "postgres");
                user = "postgres";
                password = null;
                dataSource = embedded.getPostgresDatabase();
            }
            Flyway.configure().dataSource(dataSource).locations("classpath:db/migration").load().migrate();
        }
        return dataSource;
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
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException("query failed: " + sql, e);
        }
    }

    /** The first column of every row of a query, as strings, on any database. */
    public static java.util.Set<String> strings(DataSource on, String sql) {
        try (Connection c = on.getConnection(); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery(sql)) {
            java.util.Set<String> values = new java.util.HashSet<>();
            while (rs.next()) {
                values.add(rs.getString(1));
            }
            return values;
        } catch (SQLException e) {
            throw new IllegalStateException("query failed: " + sql, e);
        }
    }

    /** Empties every table of the bundle's schema (not Flyway's history). */
    public static void truncateAll() {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("truncate webhook_inbox, inbox_account_backoff, positions, accounts, webhook_endpoints, reconcile_runs,"
                    + " position_changes, position_change_seqs");
        } catch (SQLException e) {
            throw new IllegalStateException("could not truncate the test database", e);
        }
    }
}
