package dev.metakit.inbox.support;

import org.postgresql.ds.PGSimpleDataSource;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PostgreSQL server the tests were pointed at with {@code METAKIT_TEST_DATABASE_URL} (+ {@code _USER},
 * {@code _PASSWORD}), never with the production variables ({@code DATABASE_URL}, {@code METAKIT_DATABASE_URL}): the
 * tests empty their tables. The database the URL names is only the way in: a test run creates its own databases on
 * that server ({@code CREATE DATABASE metakit_test_<random>}) and drops them when it ends. The named database must
 * not hold the bundle's tables with rows: a run pointed at a database with data stops before it touches anything.
 */
public final class ExternalTestServer {
    public static final String URL_VARIABLE = "METAKIT_TEST_DATABASE_URL";
    public static final String USER_VARIABLE = "METAKIT_TEST_DATABASE_USER";
    public static final String PASSWORD_VARIABLE = "METAKIT_TEST_DATABASE_PASSWORD";

    private static final Pattern HOST_AND_DATABASE = Pattern.compile("^(jdbc:postgresql://[^/?]*/)([^?]*)(.*)$");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final TestDatabaseSchema.Server settings;
    private final TestDatabaseSchema schema;
    private final List<String> created = new ArrayList<>();

    private ExternalTestServer(TestDatabaseSchema.Server settings, TestDatabaseSchema schema) {
        this.settings = settings;
        this.schema = schema;
    }

    /** The server named by the test variables, or empty (the tests then start an embedded PostgreSQL). */
    public static Optional<ExternalTestServer> fromEnvironment(Function<String, String> env) {
        String url = env.apply(URL_VARIABLE);
        if (url == null || url.isBlank()) {
            return Optional.empty();
        }
        TestDatabaseSchema schema = TestDatabaseSchema.loaded();
        TestDatabaseSchema.Server settings = schema.server(url, env.apply(USER_VARIABLE), env.apply(PASSWORD_VARIABLE));
        if (!HOST_AND_DATABASE.matcher(settings.jdbcUrl()).matches()) {
            throw new IllegalStateException(URL_VARIABLE + " must name a host and a database"
                    + " (jdbc:postgresql://host:port/db or postgres://user:pass@host:port/db)");
        }
        ExternalTestServer server = new ExternalTestServer(settings, schema);
        server.refuseADatabaseWithData();
        return Optional.of(server);
    }

    /** Creates a new, empty database on the server; it is dropped by {@link #dropCreated()}. Returns its JDBC URL. */
    public synchronized String createDatabase() {
        String name = "metakit_test_" + HexFormat.of().formatHex(randomBytes());
        try (Connection c = entry().getConnection(); Statement s = c.createStatement()) {
            s.execute("create database " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("could not create a test database on " + settings.description()
                    + " (the user of " + URL_VARIABLE + " needs CREATEDB): " + e.getMessage(), e);
        }
        created.add(name);
        return jdbcUrlOf(name);
    }

    /** Drops every database this run created (connections still open to them are ended first). */
    public synchronized void dropCreated() {
        for (String name : List.copyOf(created)) {
            try (Connection c = entry().getConnection(); Statement s = c.createStatement()) {
                s.execute("select pg_terminate_backend(pid) from pg_stat_activity"
                        + " where datname = '" + name + "' and pid <> pg_backend_pid()");
                s.execute("drop database if exists " + name);
                created.remove(name);
            } catch (SQLException e) {
                System.err.println("test database " + name + " on " + settings.description() + " was not dropped: "
                        + e.getMessage());
            }
        }
    }

    public String user() {
        return settings.user();
    }

    public String password() {
        return settings.password();
    }

    String jdbcUrlOf(String database) {
        Matcher m = HOST_AND_DATABASE.matcher(settings.jdbcUrl());
        if (!m.matches()) {
            throw new IllegalStateException("unexpected JDBC URL form");
        }
        return m.group(1) + database + m.group(3);
    }

    private PGSimpleDataSource entry() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(settings.jdbcUrl());
        ds.setUser(settings.user());
        ds.setPassword(settings.password());
        return ds;
    }

    /**
     * Stops the run when the named database holds the bundle's inbox table and any table of its schema has a row:
     * whoever exported the variable pointed the tests at data, most likely by mistake.
     */
    private void refuseADatabaseWithData() {
        List<String> withRows = new ArrayList<>();
        try (Connection c = entry().getConnection(); Statement s = c.createStatement()) {
            // the bundle's schema, or the schema an earlier install kept its tables in (public, as a rule); a
            // partitioned table's rows are read through it, not through its partitions; not the histories, nor
            // inbox_pending_since, whose one row the migration writes
            Map<String, String> tables = new LinkedHashMap<>();
            try (ResultSet rs = s.executeQuery("select format('%I.%I', schemaname, tablename), tablename from pg_tables t"
                    + " where exists (select 1 from pg_tables w where w.schemaname = t.schemaname"
                    + " and w.tablename = '" + schema.markerTable() + "') and tablename not in ('flyway_schema_history', '"
                    + schema.historyTable() + "', 'inbox_pending_since') and not (select relispartition from pg_class"
                    + " where oid = format('%I.%I', t.schemaname, t.tablename)::regclass)")) {
                while (rs.next()) {
                    tables.put(rs.getString(1), rs.getString(2));
                }
            }
            for (Map.Entry<String, String> table : tables.entrySet()) {
                try (ResultSet rs = s.executeQuery("select exists (select 1 from " + table.getKey() + ")")) {
                    rs.next();
                    if (rs.getBoolean(1)) {
                        withRows.add(table.getValue());
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(URL_VARIABLE + " names " + settings.description() + ", which is not usable: "
                    + e.getMessage(), e);
        }
        if (!withRows.isEmpty()) {
            throw new IllegalStateException(URL_VARIABLE + " names " + settings.description() + ", which holds the inbox"
                    + " tables with rows (" + String.join(", ", withRows) + "): the tests never run on a database with"
                    + " data. Point it at an empty database or the server's maintenance database (postgres); the tests"
                    + " create their own database there and drop it after.");
        }
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        return bytes;
    }
}
