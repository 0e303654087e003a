package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An install made before the bundle had a schema of its own: its tables in the schema its connections used (public,
 * as a rule), its history either in {@value InboxMigrations#HISTORY_TABLE} there or, older still, as the scripts
 * V1..V6 in Flyway's default {@value #SHARED_HISTORY_TABLE}. {@link #moveInto} moves those tables (their rows,
 * indexes, constraints, grants and owned sequences go with them) and the history into the bundle's schema, in the
 * caller's transaction: the install carries on from where it was, its feed's unpublished changes among its rows.
 */
final class EarlierLayout {
    private static final Logger LOG = LoggerFactory.getLogger(EarlierLayout.class);
    /** Flyway's default history table, where the bundle's first migrations were recorded before it had its own. */
    static final String SHARED_HISTORY_TABLE = "flyway_schema_history";
    /** the scripts the bundle ever recorded in the shared history; later ones went to its own table only */
    static final List<String> SCRIPTS_RECORDED_IN_SHARED_HISTORY = List.of("V1__webhook_inbox.sql",
            "V2__positions_and_accounts.sql", "V3__inbox_pending_by_account.sql", "V4__inbox_account_backoff.sql",
            "V5__inbox_instances.sql", "V6__position_changes.sql");
    /**
     * Every table the migrations before the schema of its own made, by the version that made it: an install moves
     * those its history says it made, never a table of the same name that a host made after it.
     */
    static final Map<String, Integer> TABLES = tables();

    private final String schema;
    private final boolean ownHistory;
    private final int version;

    private EarlierLayout(String schema, boolean ownHistory, int version) {
        this.schema = schema;
        this.ownHistory = ownHistory;
        this.version = version;
    }

    private static Map<String, Integer> tables() {
        Map<String, Integer> t = new LinkedHashMap<>();
        t.put("webhook_inbox", 1);
        t.put("positions", 2);
        t.put("accounts", 2);
        t.put("webhook_endpoints", 2);
        t.put("reconcile_runs", 2);
        t.put("inbox_account_backoff", 4);
        t.put("inbox_instances", 5);
        t.put("position_changes", 6);
        t.put("position_change_seqs", 6);
        t.put("feed_owners", 9);
        return t;
    }

    /**
     * The earlier install where the earlier build put it: a schema of the connection's own search_path (the
     * connection as the user configured it, without the bundle's schema) that holds the bundle's inbox table and
     * history. Another application's schema in the same database is never looked at. None: a new install. More than
     * one: the operator says which (one line).
     */
    static Optional<EarlierLayout> find(Connection c, InboxSchema target) throws SQLException {
        List<EarlierLayout> found = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("""
                select n.nspname,
                       to_regclass(format('%I.%I', n.nspname, ?)) is not null
                  from pg_namespace n
                 where n.nspname <> ?
                   and n.nspname = any (current_schemas(false))
                   and has_schema_privilege(n.oid, 'USAGE')
                   and to_regclass(format('%I.webhook_inbox', n.nspname)) is not null
                   and (to_regclass(format('%I.%I', n.nspname, ?)) is not null
                        or to_regclass(format('%I.%I', n.nspname, ?)) is not null)
                 order by n.nspname""")) {
            s.setString(1, InboxMigrations.HISTORY_TABLE);
            s.setString(2, target.name());
            s.setString(3, InboxMigrations.HISTORY_TABLE);
            s.setString(4, SHARED_HISTORY_TABLE);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    String schema = r.getString(1);
                    boolean own = r.getBoolean(2);
                    int version = recordedVersion(c, schema, own);
                    if (version > 0) {
                        found.add(new EarlierLayout(schema, own, version));
                    }
                }
            }
        }
        if (found.size() > 1) {
            throw new ConfigurationException("the bundle's tables were found in the schemas "
                    + found.stream().map(l -> l.schema).toList() + ": set " + InboxSchema.SETTING
                    + " to the one this install uses (its tables then stay where they are)");
        }
        return found.stream().findFirst();
    }

    /** The last of the bundle's versions the schema's history records applied; 0: none. */
    private static int recordedVersion(Connection c, String schema, boolean ownHistory) throws SQLException {
        String sql = ownHistory
                ? "select max(cast(version as integer)) from %s where success and version is not null"
                        .formatted(qualified(schema, InboxMigrations.HISTORY_TABLE))
                : "select max(cast(version as integer)) from %s where success and script = any (?)"
                        .formatted(qualified(schema, SHARED_HISTORY_TABLE));
        try (PreparedStatement s = c.prepareStatement(sql)) {
            if (!ownHistory) {
                s.setArray(1, c.createArrayOf("text", SCRIPTS_RECORDED_IN_SHARED_HISTORY.toArray()));
            }
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? r.getInt(1) : 0;
            }
        }
    }

    /** Moves the install's tables and history into the (empty) target schema. */
    void moveInto(Connection c, InboxSchema target) throws SQLException {
        List<String> moved = new ArrayList<>();
        try (Statement s = c.createStatement()) {
            for (Map.Entry<String, Integer> table : TABLES.entrySet()) {
                if (table.getValue() <= version && exists(c, schema, table.getKey())) {
                    s.execute("alter table " + qualified(schema, table.getKey()) + " set schema " + target.quoted());
                    moved.add(table.getKey());
                }
            }
            if (ownHistory) {
                s.execute("alter table " + qualified(schema, InboxMigrations.HISTORY_TABLE) + " set schema "
                        + target.quoted());
            } else {
                copySharedHistory(c, target);
            }
        }
        LOG.info("Moved the bundle's {} tables {} and their migration history (V{}) from the schema {} into {}",
                moved.size(), moved, version, schema, target);
    }

    /**
     * The shared history's rows of the bundle's scripts become the bundle's own history, as Flyway wrote them (same
     * checksums, renumbered in their order): the bundle's later migrations then follow as on any install. The
     * shared table and its rows stay where they are: that table may be the host's.
     */
    private void copySharedHistory(Connection c, InboxSchema target) throws SQLException {
        String history = target.table(InboxMigrations.HISTORY_TABLE);
        String shared = qualified(schema, SHARED_HISTORY_TABLE);
        try (Statement s = c.createStatement()) {
            s.execute("create table " + history + " (like " + shared + " including all)");
        }
        try (PreparedStatement s = c.prepareStatement("insert into " + history
                + " (installed_rank, version, description, type, script, checksum, installed_by, installed_on,"
                + " execution_time, success)"
                + " select row_number() over (order by installed_rank), version, description, type, script, checksum,"
                + " installed_by, installed_on, execution_time, success from " + shared
                + " where script = any (?) order by installed_rank")) {
            s.setArray(1, c.createArrayOf("text", SCRIPTS_RECORDED_IN_SHARED_HISTORY.toArray()));
            s.executeUpdate();
        }
    }

    private static boolean exists(Connection c, String schema, String table) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("select to_regclass(?) is not null")) {
            s.setString(1, qualified(schema, table));
            try (ResultSet r = s.executeQuery()) {
                return r.next() && r.getBoolean(1);
            }
        }
    }

    private static String qualified(String schema, String table) {
        return '"' + schema.replace("\"", "\"\"") + "\"." + table;
    }

    String schema() {
        return schema;
    }
}
