package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * A highly available PostgreSQL the way managed services run one, from the same embedded binaries started twice: a
 * primary and a synchronous streaming standby (every commit is on both before it returns), each a
 * {@link StoppablePostgres} on a fixed port. The standby's base is a copy of the primary's data directory taken after
 * a clean stop (the embedded binaries carry no pg_basebackup), with {@code standby.signal} and a
 * {@code primary_conninfo}; then the primary starts again with {@code synchronous_standby_names} naming it.
 */
public final class PrimaryAndStandby implements AutoCloseable {
    private static final String STANDBY_NAME = "standby";
    private static final Set<String> NOT_COPIED = Set.of("epg-lock", "postmaster.pid", "postmaster.opts");

    private final StoppablePostgres primary;
    private final StoppablePostgres standby;

    private PrimaryAndStandby(StoppablePostgres primary, StoppablePostgres standby) {
        this.primary = primary;
        this.standby = standby;
    }

    public static PrimaryAndStandby start(Path root) throws IOException {
        Path primaryDir = root.resolve("primary");
        Path standbyDir = root.resolve("standby");
        StoppablePostgres primary = new StoppablePostgres(primaryDir,
                Map.of("synchronous_standby_names", STANDBY_NAME));
        primary.stop();
        copy(primaryDir, standbyDir);
        Files.createFile(standbyDir.resolve("standby.signal"));
        primary.start();
        StoppablePostgres standby = new StoppablePostgres(standbyDir,
                Map.of("primary_conninfo", conninfo(primary.port())));
        PrimaryAndStandby pair = new PrimaryAndStandby(primary, standby);
        await("the standby streams synchronously").atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> "sync".equals(TestDatabase.strings(primary.dataSource(),
                        "select sync_state from pg_stat_replication").stream().findFirst().orElse(null)));
        return pair;
    }

    /** Quoted: the embedded server's settings reach postgres through pg_ctl's shell command line. */
    private static String conninfo(int port) {
        return "'host=127.0.0.1 port=" + port + " user=postgres application_name=" + STANDBY_NAME + "'";
    }

    public StoppablePostgres primary() {
        return primary;
    }

    public StoppablePostgres standby() {
        return standby;
    }

    /** Both hosts, the primary first, as a managed service's multi-host URL names them. */
    public String multiHostUrl() {
        return "jdbc:postgresql://127.0.0.1:" + primary.port() + ",127.0.0.1:" + standby.port()
                + "/postgres?targetServerType=primary";
    }

    /** Promotes the standby (pg_promote, waiting for it to finish): it takes writes from then on. */
    public void promoteStandby() throws SQLException {
        try (Connection c = standby.dataSource().getConnection(); Statement s = c.createStatement();
             var rs = s.executeQuery("select pg_promote(true, 60)")) {
            rs.next();
            if (!rs.getBoolean(1)) {
                throw new IllegalStateException("pg_promote did not finish within 60 s");
            }
        }
    }

    /**
     * Starts the (killed) old primary again in recovery, as a standby of the promoted one: read-only, the way a
     * managed service brings a failed primary back. Whether it can follow the new timeline does not matter here.
     */
    public void restartOldPrimaryAsStandby() throws IOException {
        Path signal = primary.dataDir().resolve("standby.signal");
        if (!Files.exists(signal)) {
            Files.createFile(signal);
        }
        primary.setServerConfig("synchronous_standby_names", "''");
        primary.setServerConfig("primary_conninfo", conninfo(standby.port()));
        primary.start();
    }

    /** Whether the server runs in recovery (read-only: it takes no write). */
    public static boolean inRecovery(StoppablePostgres server) {
        return "t".equals(TestDatabase.strings(server.dataSource(), "select pg_is_in_recovery()::text")
                .stream().findFirst().map(v -> v.substring(0, 1)).orElse(null));
    }

    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            paths.forEach(p -> {
                Path target = to.resolve(from.relativize(p).toString());
                try {
                    if (Files.isDirectory(p)) {
                        Files.createDirectories(target);
                    } else if (!NOT_COPIED.contains(p.getFileName().toString())) {
                        Files.copy(p, target);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        // PostgreSQL refuses a data directory others can read
        Files.setPosixFilePermissions(to, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }

    @Override
    public void close() throws IOException {
        try (StoppablePostgres p = primary; StoppablePostgres s = standby) {
            // both stopped, the standby first
        }
    }
}
