package dev.metakit.inbox.db;

import java.nio.file.Path;

/**
 * A PostgreSQL server the bundle starts itself when no database is configured (the standalone run's default). The
 * bundle does not carry one: the standalone runtime provides it ({@link Starter}, found by {@link java.util.ServiceLoader}),
 * so a host that brings its own database never gets the embedded server's library.
 */
public interface EmbeddedPostgreSQL extends AutoCloseable {
    /** A JDBC URL of the running server, as its superuser. */
    String jdbcUrl();

    @Override
    void close();

    /** Starts an embedded server on a data directory (created if absent, kept across runs). */
    interface Starter {
        EmbeddedPostgreSQL start(Path dataDirectory);
    }
}
