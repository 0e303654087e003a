package dev.metakit.inbox.support;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import static org.awaitility.Awaitility.await;

/**
 * A PostgreSQL of its own for a fault test, on a fixed port and data directory, so it can be stopped, killed and
 * started again under a running bundle (which keeps its JDBC URL).
 */
public final class StoppablePostgres implements AutoCloseable {
    private final Path dataDir;
    private final int port;
    private final java.util.Map<String, String> serverConfig = new java.util.LinkedHashMap<>();
    private EmbeddedPostgres postgres;
    private String jdbcUrl;

    public StoppablePostgres(Path dataDir) throws IOException {
        this(dataDir, java.util.Map.of());
    }

    /** With more server settings ({@code postgres -c key=value}), e.g. a standby's {@code primary_conninfo}. */
    public StoppablePostgres(Path dataDir, java.util.Map<String, String> serverConfig) throws IOException {
        this.dataDir = dataDir;
        this.serverConfig.putAll(serverConfig);
        // its own port, kept across a stop and a start
        port = TestPorts.free();
        start();
    }

    /** Changes a server setting for the next {@link #start()}. */
    public synchronized void setServerConfig(String key, String value) {
        serverConfig.put(key, value);
    }

    public int port() {
        return port;
    }

    public Path dataDir() {
        return dataDir;
    }

    public synchronized void start() throws IOException {
        // a server as a user runs it: the library's defaults (fsync and synchronous_commit off) lose the last
        // commits in a crash, acked deliveries and recorded outcomes alike
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder().setDataDirectory(dataDir)
                .setCleanDataDirectory(false).setPort(port)
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("full_page_writes", "on");
        serverConfig.forEach(builder::setServerConfig);
        postgres = builder.start();
        jdbcUrl = postgres.getJdbcUrl("postgres", "postgres");
    }

    /** A clean stop (PostgreSQL's fast shutdown: sessions are ended, nothing is lost). */
    public synchronized void stop() throws IOException {
        postgres.close();
        postgres = null;
    }

    /**
     * SIGKILL of the postmaster: the next start runs crash recovery. Returns once the killed server's processes are
     * gone (its backends exit when they see the postmaster died), so a start can take its shared memory over.
     */
    public synchronized void kill() throws IOException {
        long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
        ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
        var children = postmaster.children().toList();
        postmaster.destroyForcibly();
        await().atMost(Duration.ofSeconds(20)).until(() -> !postmaster.isAlive()
                && children.stream().noneMatch(ProcessHandle::isAlive));
        // releases the handle's lock on the data directory (its pg_ctl stop finds no server, which is the point)
        try {
            postgres.close();
        } catch (IOException | RuntimeException expected) {
            // nothing to stop
        }
        postgres = null;
    }

    /** Ends every client session but the caller's (pg_terminate_backend); returns how many. */
    public int terminateClientSessions() throws SQLException {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement();
             var rs = s.executeQuery("select count(pg_terminate_backend(pid)) from pg_stat_activity"
                     + " where pid <> pg_backend_pid() and backend_type = 'client backend'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    public String jdbcUrl() {
        return jdbcUrl;
    }

    /** The bundle's settings for this server. */
    public java.util.Map<String, String> bundleSettings() {
        return java.util.Map.of("metakit.database.url", jdbcUrl, "metakit.database.user", "postgres",
                "metakit.database.password", "");
    }

    /** A fresh DataSource on the running server (a test's own queries), on the bundle's schema. */
    public synchronized DataSource dataSource() {
        if (postgres == null) {
            throw new IllegalStateException("PostgreSQL is not running");
        }
        return postgres.getPostgresDatabase(java.util.Map.of("currentSchema", TestDatabaseSchema.loaded().name()));
    }

    @Override
    public synchronized void close() throws IOException {
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
    }
}
