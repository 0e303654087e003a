package dev.metakit.inbox.db;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.List;

/**
 * The bundle's schema migrations, beside whatever a host migrates in the same schema: a location of their own
 * ({@value #LOCATION}, not Flyway's and Spring Boot's default {@code db/migration}) and a history table of their own
 * ({@value #HISTORY_TABLE}), so a host's {@code V1} never meets the bundle's.
 *
 * <p>Databases migrated before the bundle had its own table recorded {@code V1}..{@code V6} in Flyway's default
 * {@code flyway_schema_history}. When the bundle's table is absent and that one lists the bundle's scripts, the
 * bundle's history starts from a baseline at the highest of them: those installs carry on with the next migration.
 * The old rows stay where they are (that table may be the host's).
 */
public final class InboxMigrations {
    public static final String LOCATION = "classpath:db/metakit";
    public static final String HISTORY_TABLE = "metakit_schema_history";
    /** Flyway's default history table, where the bundle's migrations were recorded before it had its own. */
    static final String SHARED_HISTORY_TABLE = "flyway_schema_history";
    /** the scripts the bundle ever recorded in {@value #SHARED_HISTORY_TABLE}; later ones go to its own table only */
    static final List<String> SCRIPTS_RECORDED_IN_SHARED_HISTORY = List.of("V1__webhook_inbox.sql",
            "V2__positions_and_accounts.sql", "V3__inbox_pending_by_account.sql", "V4__inbox_account_backoff.sql",
            "V5__inbox_instances.sql", "V6__position_changes.sql");

    private static final int FIRST_CONNECTION_ATTEMPTS = 3;

    private InboxMigrations() {
    }

    /**
     * Applies the bundle's pending migrations (Flyway takes a PostgreSQL advisory lock: instances starting together
     * migrate once). In a schema that holds other tables (a host's) the bundle's history starts at a baseline: version
     * 0 on a schema the bundle never migrated, or the last version an earlier install recorded.
     */
    public static MigrateResult migrate(DataSource dataSource) {
        return Flyway.configure().dataSource(dataSource).locations(LOCATION).table(HISTORY_TABLE)
                .baselineOnMigrate(true).baselineVersion(String.valueOf(carriedOverVersion(dataSource)))
                .baselineDescription("metakit-inbox baseline").connectRetries(0).load().migrate();
    }

    /** The last of the bundle's versions recorded in the shared history table, when the bundle's own is absent. */
    static int carriedOverVersion(DataSource dataSource) {
        try (Connection c = firstConnection(dataSource)) {
            if (tableExists(c, HISTORY_TABLE) || !tableExists(c, SHARED_HISTORY_TABLE)) {
                return 0;
            }
            try (PreparedStatement s = c.prepareStatement("select max(cast(version as integer)) from "
                    + SHARED_HISTORY_TABLE + " where success and script = any (?)")) {
                s.setArray(1, c.createArrayOf("text", SCRIPTS_RECORDED_IN_SHARED_HISTORY.toArray()));
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? r.getInt(1) : 0;
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the schema history: " + e.getMessage(), e);
        }
    }

    /**
     * The pool's first connection, right after the pool was made: on a cold, loaded machine making it can take longer
     * than one connection timeout (the pool fills in the background), so a timeout is tried twice more: a server that
     * is down is reported after three of them.
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

    private static boolean tableExists(Connection c, String table) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("select to_regclass(?) is not null")) {
            s.setString(1, table);
            try (ResultSet r = s.executeQuery()) {
                return r.next() && r.getBoolean(1);
            }
        }
    }
}
