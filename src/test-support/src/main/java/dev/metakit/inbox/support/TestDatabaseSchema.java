package dev.metakit.inbox.support;

import javax.sql.DataSource;
import java.util.ServiceLoader;

/**
 * What the test database holds, given by the tests that use it: one implementation on the test classpath, named in
 * {@code META-INF/services/dev.metakit.inbox.support.TestDatabaseSchema} (the bundle's tests bring the bundle's: its
 * schema, its migrations). So this module depends on no module of the build, and the bundle's tests can take it.
 */
public interface TestDatabaseSchema {

    /** The schema the test database's connections resolve table names in. */
    String name();

    /** The schema history table that {@link TestDatabase#truncateAll()} keeps. */
    String historyTable();

    /**
     * A table whose presence says a schema holds this build's tables: an external test server whose named database
     * has it, with rows, is refused ({@link ExternalTestServer}).
     */
    String markerTable();

    /** Migrates a new database to the schema. */
    void migrate(DataSource dataSource);

    /** A server named by a URL in any form a user may write one (JDBC or {@code postgres://}), as the build reads it. */
    Server server(String url, String user, String password);

    /** A server's JDBC URL and credentials, and how to name it in a message (no password). */
    record Server(String jdbcUrl, String user, String password, String description) {
    }

    /** The one implementation on the classpath. */
    static TestDatabaseSchema loaded() {
        return ServiceLoader.load(TestDatabaseSchema.class).findFirst().orElseThrow(() -> new IllegalStateException(
                "no TestDatabaseSchema on the test classpath: name one in META-INF/services/"
                        + TestDatabaseSchema.class.getName() + " (the bundle's tests' jar has the bundle's)"));
    }
}
