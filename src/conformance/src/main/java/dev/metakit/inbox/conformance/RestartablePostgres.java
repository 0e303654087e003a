package dev.metakit.inbox.conformance;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The runtime's PostgreSQL (embedded), on a fixed port and data directory so that it can be stopped and started again
 * under a running runtime, which keeps its JDBC URL. Its password is a secret the runtime is given.
 */
public final class RestartablePostgres implements AutoCloseable {
    public static final String USER = "postgres";
    private final Path dataDir;
    private final int port;
    private EmbeddedPostgres postgres;

    public RestartablePostgres() {
        try {
            dataDir = Files.createTempDirectory("metakit-conformance-pg");
            // below the ephemeral range: no client connection takes it while the server is stopped
            port = RuntimeParts.freePort();
            start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public synchronized void start() throws IOException {
        postgres = EmbeddedPostgres.builder().setDataDirectory(dataDir).setCleanDataDirectory(false).setPort(port)
                .start();
    }

    /** PostgreSQL's fast shutdown: sessions are ended, nothing is lost. */
    public synchronized void stop() throws IOException {
        postgres.close();
        postgres = null;
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port + "/postgres";
    }

    /** The test's own connections (the server must be running). */
    public synchronized DataSource dataSource() {
        if (postgres == null) {
            throw new IllegalStateException("PostgreSQL is not running");
        }
        return postgres.getPostgresDatabase();
    }

    /** Stops the server and deletes the data directory it made (its own temporary one: nothing else is in it). */
    @Override
    public synchronized void close() throws IOException {
        if (postgres != null) {
            stop();
        }
        try (java.util.stream.Stream<Path> files = Files.walk(dataDir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
