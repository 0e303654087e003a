package dev.metakit.inbox.support;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * For each test ({@code @RegisterExtension}), the bundle at the defaults a user gets, on a PostgreSQL of its own (which
 * a fault test stops, kills or cuts off, in a fresh data directory): against a MetaKit double where each of the first
 * {@code accounts} accounts has one open position, or with only some route files and no MetaKit.
 */
public final class OwnPostgresInbox implements BeforeEachCallback, AfterEachCallback {
    private final int accounts;
    private final String[] routeFiles;
    private Path dataDir;
    private StoppablePostgres postgres;
    private FakeMetaKit metakit;
    private RunningInbox inbox;

    public OwnPostgresInbox(int accounts) {
        this(accounts, new String[0]);
    }

    private OwnPostgresInbox(int accounts, String[] routeFiles) {
        this.accounts = accounts;
        this.routeFiles = routeFiles;
    }

    /** The bundle with only these route files ({@link RunningInbox#onlyRoutes}) and no MetaKit double. */
    public static OwnPostgresInbox withOnlyRoutes(String... routeFiles) {
        return new OwnPostgresInbox(0, routeFiles);
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        dataDir = Files.createTempDirectory("own-postgres-");
        postgres = new StoppablePostgres(dataDir);
        Map<String, String> settings = new HashMap<>(postgres.bundleSettings());
        if (routeFiles.length > 0) {
            settings.put("camel.main.routes-include-pattern", RunningInbox.onlyRoutes(routeFiles));
        } else {
            metakit = new FakeMetaKit();
            metakit.openOnePositionEach(accounts, "0.10");
            settings.put("metakit.api.url", metakit.url());
            settings.put("metakit.api.key", FakeMetaKit.API_KEY);
        }
        inbox = RunningInbox.start(settings);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            if (inbox != null) {
                inbox.close();
            }
        } finally {
            try (StoppablePostgres p = postgres; FakeMetaKit m = metakit) {
                inbox = null;
            } finally {
                delete(dataDir);
            }
        }
    }

    public StoppablePostgres postgres() {
        return postgres;
    }

    public RunningInbox inbox() {
        return inbox;
    }

    /** How long after {@code from} (nanoTime) every one of {@code keys} was processed (polled every 100 ms). */
    public Duration untilProcessed(Set<String> keys, long from, Duration patience) {
        await().atMost(patience).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> processed(keys) == keys.size());
        return Duration.ofNanos(System.nanoTime() - from);
    }

    /** Those of {@code acked} that have no row in the inbox. */
    public Set<String> missing(Set<String> acked) {
        Set<String> missing = new HashSet<>(acked);
        missing.removeAll(TestDatabase.strings(postgres.dataSource(), "select delivery_key from webhook_inbox"));
        return missing;
    }

    private long processed(Set<String> keys) throws SQLException {
        try (var c = postgres.dataSource().getConnection(); var ps = c.prepareStatement(
                "select count(*) from webhook_inbox where delivery_key = any(?) and processed_at is not null")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void delete(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
