package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The bundle's schema migrations, in the bundle's schema ({@link InboxSchema}): a location of their own
 * ({@value #LOCATION}, not Flyway's and Spring Boot's default {@code db/migration}) and a history table of their own
 * ({@value #HISTORY_TABLE}) inside that schema. A host's Flyway, on its own schema, finds neither the bundle's tables
 * nor its history, whichever of the two runs first.
 *
 * <p>Before Flyway runs, in one transaction under an advisory lock (instances starting together do it once): the
 * schema is created when absent, and an install from before the schema of its own ({@link EarlierLayout}) is moved
 * into it.
 */
public final class InboxMigrations {
    private static final Logger LOG = LoggerFactory.getLogger(InboxMigrations.class);
    public static final String LOCATION = "classpath:db/metakit";
    public static final String HISTORY_TABLE = "metakit_schema_history";
    /** the advisory lock of the schema's preparation: "metakit-inbox schema" */
    private static final long PREPARATION_LOCK = 0x6d6b2d7363686d61L;

    private static final int FIRST_CONNECTION_ATTEMPTS = 3;

    private InboxMigrations() {
    }

    /** {@link #migrate(DataSource, InboxSchema)} into the default schema, {@value InboxSchema#DEFAULT}. */
    public static MigrateResult migrate(DataSource dataSource) {
        return migrate(dataSource, InboxSchema.of(null));
    }

    /** {@link #migrate(DataSource, DataSource, InboxSchema)} with one DataSource for both. */
    public static MigrateResult migrate(DataSource dataSource, InboxSchema schema) {
        return migrate(dataSource, dataSource, schema);
    }

    /**
     * Prepares the schema, then applies the bundle's pending migrations there (Flyway takes a PostgreSQL advisory
     * lock of its own). Every name is qualified, and Flyway puts back the {@code search_path} of the connection it
     * used.
     *
     * @param asConfigured connections with the search_path the user's settings give (not the bundle's schema): where
     *                     an earlier build put its tables, and where they are looked for
     */
    public static MigrateResult migrate(DataSource dataSource, DataSource asConfigured, InboxSchema schema) {
        prepare(asConfigured, schema);
        MigrateResult result = Flyway.configure().dataSource(dataSource).locations(LOCATION)
                .schemas(schema.name()).defaultSchema(schema.name()).createSchemas(false).table(HISTORY_TABLE)
                .connectRetries(0).load().migrate();
        makePartitionsAhead(dataSource, schema);
        return result;
    }

    /** The inbox's and the feed's days ahead, before any route stores a row (DayPartitions). */
    private static void makePartitionsAhead(DataSource dataSource, InboxSchema schema) {
        try (Connection c = dataSource.getConnection()) {
            for (DayPartitions days : List.of(DayPartitions.INBOX, DayPartitions.FEED)) {
                List<String> made = days.makeAhead(c, Instant.now(), schema);
                if (!made.isEmpty()) {
                    LOG.info("Partitions made ahead of {}: {}", days.table(), made);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not make the partitions ahead in the schema " + schema + ": "
                    + e.getMessage(), e);
        }
    }

    /** Creates the schema or moves an earlier install into it, in one transaction. */
    static void prepare(DataSource dataSource, InboxSchema schema) {
        try (Connection c = firstConnection(dataSource)) {
            Jdbc.inTransaction(c, tx -> {
                try (PreparedStatement lock = tx.prepareStatement("select pg_advisory_xact_lock(?)")) {
                    lock.setLong(1, PREPARATION_LOCK);
                    lock.execute();
                }
                boolean hasHistory = SchemaSetup.exists(tx, schema) && tableExists(tx, schema, HISTORY_TABLE);
                SchemaSetup.prepare(tx, schema, !hasHistory);
                if (!hasHistory) {
                    List<String> foreign = tables(tx, schema);
                    if (!foreign.isEmpty()) {
                        throw new ConfigurationException("the schema " + schema + " holds tables that are not the "
                                + "bundle's " + foreign + ": set " + InboxSchema.SETTING + " to a schema of its own");
                    }
                    var earlier = EarlierLayout.find(tx, schema);
                    if (earlier.isPresent()) {
                        earlier.get().moveInto(tx, schema);
                    }
                }
                return null;
            });
        } catch (SQLException e) {
            throw new IllegalStateException("could not prepare the schema " + schema + ": " + e.getMessage(), e);
        }
    }

    /**
     * The first connection, right after the pool was made: on a cold, loaded machine making it can take longer than
     * one connection timeout (the pool fills in the background), so a timeout is tried twice more: a server that is
     * down is reported after three of them.
     */
    private static Connection firstConnection(DataSource dataSource) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try {
                return dataSource.getConnection();
            } catch (SQLTransientConnectionException e) {
                if (attempt == FIRST_CONNECTION_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /** From the catalog: a schema the role may not use yet is looked into without an error. */
    private static boolean tableExists(Connection c, InboxSchema schema, String table) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(
                "select exists (select 1 from pg_tables where schemaname = ? and tablename = ?)")) {
            s.setString(1, schema.name());
            s.setString(2, table);
            try (ResultSet r = s.executeQuery()) {
                return r.next() && r.getBoolean(1);
            }
        }
    }

    private static List<String> tables(Connection c, InboxSchema schema) throws SQLException {
        List<String> names = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(
                "select tablename from pg_tables where schemaname = ? order by tablename")) {
            s.setString(1, schema.name());
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    names.add(r.getString(1));
                }
            }
        }
        return names;
    }
}
