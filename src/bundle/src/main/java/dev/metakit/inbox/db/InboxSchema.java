package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;

import java.util.regex.Pattern;

/**
 * The schema that holds the bundle's tables, sequences and migration history ({@code metakit.database.schema}, default
 * {@value #DEFAULT}): a namespace of its own in a host's database, so a host's {@code accounts} or {@code positions}
 * in {@code public} never meets the bundle's, and a host's Flyway never sees them. A lower-case SQL identifier, so it
 * means the same quoted or not, in a JDBC URL's {@code currentSchema} as in SQL.
 */
public record InboxSchema(String name) {
    public static final String DEFAULT = "metakit";
    static final String SETTING = "metakit.database.schema (METAKIT_DATABASE_SCHEMA)";
    /** PostgreSQL's identifiers are at most 63 bytes; pg_ names are the server's own */
    private static final Pattern IDENTIFIER = Pattern.compile("(?!pg_)[a-z_][a-z0-9_]{0,62}");

    public InboxSchema {
        if (name == null || !IDENTIFIER.matcher(name).matches()) {
            throw new ConfigurationException(SETTING + " must be a lower-case SQL identifier (a-z, 0-9, _, at most 63,"
                    + " not starting with a digit or pg_), got '" + name + "'");
        }
    }

    /** The setting's value, blank meaning the default. */
    public static InboxSchema of(String value) {
        return new InboxSchema(value == null || value.isBlank() ? DEFAULT : value.trim());
    }

    /** As SQL spells it: quoted, so a name that is also a keyword still names the schema. */
    public String quoted() {
        return '"' + name + '"';
    }

    /** A table of the schema, qualified and quoted. */
    public String table(String table) {
        return quoted() + '.' + table;
    }

    @Override
    public String toString() {
        return name;
    }
}
