package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Makes the bundle's schema ready for its migrations, in the caller's transaction: creates it when absent, or says in
 * one line what to run when the database's role may not. A schema made by someone else (an operator who keeps
 * CREATE on the database for the owner) is used as it is, given the right to use it.
 */
final class SchemaSetup {
    private SchemaSetup() {
    }

    /**
     * @param creating whether tables are about to be made in the schema (no history of the bundle there yet), so
     *                 CREATE on it is needed beside USAGE
     */
    static void prepare(Connection c, InboxSchema schema, boolean creating) throws SQLException {
        if (!exists(c, schema)) {
            if (!allowed(c, "select has_database_privilege(current_database(), 'CREATE')", null)) {
                throw new ConfigurationException("the database role " + role(c) + " may not create the schema "
                        + schema + " that holds the bundle's tables: as the database's owner run \"create schema "
                        + schema + " authorization " + role(c) + "\" (or \"grant create on database "
                        + database(c) + " to " + role(c) + "\"), or set " + InboxSchema.SETTING
                        + " to a schema it may use");
            }
            try (Statement s = c.createStatement()) {
                s.execute("create schema if not exists " + schema.quoted());
            }
            return;
        }
        String needed = creating ? "USAGE, CREATE" : "USAGE";
        if (!allowed(c, "select has_schema_privilege(?, '" + needed + "')", schema.name())) {
            throw new ConfigurationException("the database role " + role(c) + " may not use the schema " + schema
                    + " that holds the bundle's tables: as its owner run \"grant " + needed.toLowerCase()
                    + " on schema " + schema + " to " + role(c) + "\", or set " + InboxSchema.SETTING
                    + " to a schema it may use");
        }
    }

    static boolean exists(Connection c, InboxSchema schema) throws SQLException {
        return allowed(c, "select exists (select 1 from pg_namespace where nspname = ?)", schema.name());
    }

    private static boolean allowed(Connection c, String sql, String parameter) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            if (parameter != null) {
                s.setString(1, parameter);
            }
            try (ResultSet r = s.executeQuery()) {
                return r.next() && r.getBoolean(1);
            }
        }
    }

    private static String role(Connection c) throws SQLException {
        return text(c, "select quote_ident(current_user)");
    }

    private static String database(Connection c) throws SQLException {
        return text(c, "select quote_ident(current_database())");
    }

    private static String text(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }
}
