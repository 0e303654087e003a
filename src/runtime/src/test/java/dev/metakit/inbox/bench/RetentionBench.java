package dev.metakit.inbox.bench;

import dev.metakit.inbox.db.InboxMigrations;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxIntake;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.ops.InboxRetention;
import dev.metakit.inbox.support.TestDatabase;
import org.flywaydb.core.Flyway;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Retention and the WAL of a stored delivery, the inbox partitioned by day (this build) beside the inbox as one table
 * (the schema up to V11 and the build before's statements, quoted below). Not a test: run by
 * {@code bench/worker-bench.sh retention}, never by {@code mvn verify}.
 *
 * <p>Two databases of the test server, one per layout. Figures:
 * <ul>
 *   <li>{@code wal}: WAL bytes per stored delivery ({@code pg_current_wal_lsn()} before and after {@code --wal-rows}
 *       deliveries stored by each layout's ingest statement, 16 per statement, one commit each);</li>
 *   <li>{@code drop}: one day of {@code --day-rows} processed rows, made by generate_series, retired: the build
 *       before's batched DELETE (5,000 rows a statement) against this build's retention run (the day's partition
 *       detached and dropped, the days ahead made); wall time, and PostgreSQL's CPU (of every process of the server,
 *       from /proc, before and after);</li>
 *   <li>{@code cycle}: {@code --cycles} simulated days of {@code --cycle-rows} rows each, retention of 2 days run after
 *       each (a plain VACUUM after it, autovacuum's best case for the DELETE), the table's size with its indexes;</li>
 *   <li>{@code claim}: the worker's claim ({@link InboxClaims#claim}, batch 500) of 100 due rows, median of 20, with
 *       nothing retained and with the cycles' rows retained (this build's claim on both: the one table gets the
 *       column {@code signed_at}, unindexed, which the claim names).</li>
 * </ul>
 * <pre>
 * java -cp ... dev.metakit.inbox.bench.RetentionBench [--wal-rows 20000] [--day-rows 2000000] [--cycles 12]
 *   [--cycle-rows 200000] [--parts wal,drop,cycle] [--result-file results.tsv] [--label retention]
 * </pre>
 */
public final class RetentionBench {
    /** InboxAdmin's prune of the build before (one table): one bounded batch, repeated until a short one */
    private static final String ONE_TABLE_PRUNE = """
            delete from webhook_inbox where delivery_key in (
                select delivery_key from webhook_inbox
                 where processed_at is not null and failed_at is null and received_at < ?
                 limit ? for update skip locked)""";
    /** InboxIntake's insert of the build before */
    private static final String ONE_TABLE_INSERT = """
            insert into webhook_inbox (delivery_key, event, account_id, body, body_raw)
            select * from unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::bytea[])
            on conflict (delivery_key) do nothing
            returning delivery_key""";
    private static final String BODY = "{\"event\":\"position.opened\",\"account_id\":2,\"created_at\":"
            + "\"2026-12-02T10:15:30Z\",\"data\":{\"ticket\":99302156,\"symbol\":\"EURUSD\",\"type\":\"buy\","
            + "\"volume\":0.10,\"price_open\":1.08450,\"sl\":1.08000,\"tp\":1.09500,\"profit\":0.00,\"swap\":0.00,"
            + "\"commission\":-0.70,\"time\":\"2026-12-02T10:15:30Z\",\"magic\":20261202,\"comment\":"
            + "\"metakit-inbox bench\",\"login\":5000002,\"server\":\"MetaQuotes-Demo\",\"position_id\":99302156}}";

    private record Layout(String name, DataSource db, boolean partitioned) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = DrainBench.BenchOptions.parse(args, "retention", Map.of("wal-rows", "20000",
                "day-rows", "2000000", "cycles", "12", "cycle-rows", "200000", "parts", "wal,drop,cycle"));
        List<String> parts = List.of(o.get("parts").split(","));
        List<Layout> layouts = List.of(layout("one table (V11)", "11"), layout("partitioned (V12)", null));
        for (Layout l : parts.contains("wal") ? layouts : List.<Layout>of()) {
            double wal = walPerDelivery(l, Integer.parseInt(o.get("wal-rows")));
            print(o, l, "wal", "bytes per delivery", wal);
        }
        // the first simulated day: the day after tomorrow, a day partition the migration made (before today is the
        // kept partition's)
        Instant day0 = Instant.now().truncatedTo(ChronoUnit.DAYS).plus(2, ChronoUnit.DAYS);
        for (Layout l : parts.contains("drop") ? layouts : List.<Layout>of()) {
            truncate(l);
            fillDay(l, day0, Integer.parseInt(o.get("day-rows")));
            exec(l.db(), "vacuum analyze webhook_inbox");
            long cpu0 = serverCpuMillis(l.db());
            long t0 = System.nanoTime();
            retire(l, day0.plus(1, ChronoUnit.DAYS), day0.plus(8, ChronoUnit.DAYS), "P7D");
            long wallMs = (System.nanoTime() - t0) / 1_000_000;
            long cpuMs = serverCpuMillis(l.db()) - cpu0;
            print(o, l, "drop", o.get("day-rows") + " rows: wall ms", wallMs);
            print(o, l, "drop", o.get("day-rows") + " rows: PostgreSQL CPU ms", cpuMs);
            print(o, l, "drop", "rows left", scalar(l.db(), "select count(*) from webhook_inbox"));
        }
        for (Layout l : parts.contains("cycle") ? layouts : List.<Layout>of()) {
            truncate(l);
            print(o, l, "claim", "ms, nothing retained", claimMillis(l));
            int cycles = Integer.parseInt(o.get("cycles"));
            for (int c = 0; c < cycles; c++) {
                Instant day = day0.plus(c, ChronoUnit.DAYS);
                fillDay(l, day, Integer.parseInt(o.get("cycle-rows")));
                Instant end = day.plus(1, ChronoUnit.DAYS);
                retire(l, end.minus(2, ChronoUnit.DAYS), end, "P2D");
                exec(l.db(), "vacuum webhook_inbox");
                print(o, l, "cycle", "day " + (c + 1) + ": bytes, rows", sizeBytes(l) + "\t"
                        + scalar(l.db(), "select count(*) from webhook_inbox"));
            }
            exec(l.db(), "analyze webhook_inbox");
            print(o, l, "claim", "ms, " + scalar(l.db(), "select count(*) from webhook_inbox") + " retained",
                    claimMillis(l));
        }
    }

    private static Layout layout(String name, String target) {
        String url = TestDatabase.createDatabase();
        DataSource plain = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        if (target == null) {
            InboxMigrations.migrate(plain);
        } else {
            Flyway.configure().dataSource(plain).locations(InboxMigrations.LOCATION).schemas("metakit")
                    .defaultSchema("metakit").table(InboxMigrations.HISTORY_TABLE).target(target).load().migrate();
            // this build's claim names signed_at; on one table the column is only read (no index, no partition)
            TestDatabase.exec(plain, "alter table metakit.webhook_inbox add column signed_at timestamptz not null"
                    + " default now()");
        }
        DataSource db = TestDatabase.on(url + (url.contains("?") ? "&" : "?") + "currentSchema=metakit",
                TestDatabase.user(), TestDatabase.password());
        return new Layout(name, db, target == null);
    }

    private static double walPerDelivery(Layout l, int rows) throws SQLException {
        truncate(l);
        exec(l.db(), "checkpoint");
        try (Connection c = l.db().getConnection()) {
            long before = lsn(c);
            long t = Instant.now().getEpochSecond();
            for (int i = 0; i < rows; i += 16) {
                int n = Math.min(16, rows - i);
                String[] keys = new String[n];
                String[] events = new String[n];
                Long[] accounts = new Long[n];
                String[] texts = new String[n];
                Long[] signed = new Long[n];
                for (int k = 0; k < n; k++) {
                    keys[k] = t + ":" + String.format(Locale.ROOT, "%064x", i + k);
                    events[k] = "position.opened";
                    accounts[k] = (long) ((i + k) % 1000);
                    texts[k] = BODY;
                    signed[k] = t;
                }
                if (l.partitioned()) {
                    InboxIntake.insert(c, 10_000, keys, events, accounts, texts, new byte[n][], signed, new String[n]);
                } else {
                    try (PreparedStatement s = c.prepareStatement(ONE_TABLE_INSERT)) {
                        s.setArray(1, c.createArrayOf("text", keys));
                        s.setArray(2, c.createArrayOf("text", events));
                        s.setArray(3, c.createArrayOf("bigint", accounts));
                        s.setArray(4, c.createArrayOf("text", texts));
                        s.setArray(5, c.createArrayOf("bytea", new byte[n][]));
                        s.executeQuery().close();
                    }
                }
            }
            return (double) (lsn(c) - before) / rows;
        }
    }

    /** {@code rows} processed deliveries signed and received over the day from {@code day}, one in 10,000 pending */
    private static void fillDay(Layout l, Instant day, int rows) throws SQLException {
        String signed = l.partitioned() ? ", signed_at" : "";
        String at = "'" + day + "'::timestamptz + g * interval '86399 seconds' / " + rows;
        exec(l.db(), "insert into webhook_inbox (delivery_key, event, account_id, body, received_at, processed_at"
                + signed + ") select extract(epoch from " + at + ")::bigint || ':' || md5(g::text || '" + day
                + "'), 'position.opened', g % 1000, '" + BODY + "', " + at + ", case when g % 10000 = 0 then null"
                + " else " + at + " + interval '1 second' end" + (l.partitioned() ? ", " + at : "")
                + " from generate_series(1, " + rows + ") g");
    }

    /** Retention as each build runs it, at {@code now}; {@code cutoff} is now less the retention. */
    private static void retire(Layout l, Instant cutoff, Instant now, String retention) throws SQLException {
        if (l.partitioned()) {
            InboxRetention r = new InboxRetention();
            r.setDataSource(l.db());
            r.setRetention(retention);
            r.setBatchSize(5000);
            r.setClock(Clock.fixed(now, ZoneOffset.UTC));
            r.prune();
        } else {
            try (Connection c = l.db().getConnection(); PreparedStatement s = c.prepareStatement(ONE_TABLE_PRUNE)) {
                s.setObject(1, cutoff.atOffset(ZoneOffset.UTC));
                s.setInt(2, 5000);
                while (s.executeUpdate() == 5000) {
                    // until a short batch
                }
            }
        }
    }

    private static double claimMillis(Layout l) throws SQLException {
        Claimant self = Claimant.newBoot("retention-bench");
        new InstanceLiveness(l.db(), self, Duration.ofSeconds(30)).beat();
        InboxClaims claims = new InboxClaims(l.db());
        double[] ms = new double[20];
        for (int r = 0; r < ms.length; r++) {
            exec(l.db(), "insert into webhook_inbox (delivery_key, event, account_id, body) select 'claim-" + r
                    + "-' || g, 'position.opened', 100000 + g, '{}' from generate_series(1, 100) g");
            long t0 = System.nanoTime();
            claims.claim(self, 500, Duration.ofSeconds(30));
            ms[r] = (System.nanoTime() - t0) / 1e6;
            exec(l.db(), "update webhook_inbox set processed_at = now() where delivery_key like 'claim-" + r + "-%'");
        }
        Arrays.sort(ms);
        return ms[ms.length / 2];
    }

    private static long sizeBytes(Layout l) throws SQLException {
        return scalar(l.db(), "select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c"
                + " where c.oid = to_regclass('webhook_inbox') or c.oid in (select inhrelid from pg_inherits"
                + " where inhparent = to_regclass('webhook_inbox'))");
    }

    /**
     * utime + stime of every process of the server: the postmaster with its children that ended (cutime + cstime),
     * and its children running (backends, autovacuum, writers)
     */
    private static long serverCpuMillis(DataSource db) throws SQLException {
        String dataDirectory = text(db, "select current_setting('data_directory')");
        try {
            long postmaster = Long.parseLong(Files.readAllLines(Path.of(dataDirectory, "postmaster.pid")).get(0).trim());
            long ticks = 0;
            try (var procs = Files.list(Path.of("/proc"))) {
                for (Path p : (Iterable<Path>) procs::iterator) {
                    String name = p.getFileName().toString();
                    if (!name.chars().allMatch(Character::isDigit)) {
                        continue;
                    }
                    try {
                        String stat = Files.readString(p.resolve("stat"));
                        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                        long pid = Long.parseLong(name);
                        if (pid == postmaster) {
                            // with its children's that ended (a closed connection's backend): cutime, cstime
                            ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13])
                                    + Long.parseLong(f[14]);
                        } else if (Long.parseLong(f[1]) == postmaster) {
                            ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                        }
                    } catch (java.io.IOException | RuntimeException gone) {
                        // a process that ended meanwhile
                    }
                }
            }
            return ticks * 10; // USER_HZ = 100
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot read the server's processes: " + e.getMessage(), e);
        }
    }

    private static long lsn(Connection c) throws SQLException {
        try (ResultSet r = c.createStatement().executeQuery("select pg_current_wal_lsn() - '0/0'::pg_lsn")) {
            r.next();
            return r.getLong(1);
        }
    }

    private static void truncate(Layout l) {
        exec(l.db(), "truncate webhook_inbox");
    }

    private static void exec(DataSource db, String sql) {
        TestDatabase.exec(db, sql);
    }

    private static long scalar(DataSource db, String sql) {
        return TestDatabase.scalar(db, sql);
    }

    private static String text(DataSource db, String sql) {
        return TestDatabase.text(db, sql);
    }

    private static void print(Map<String, String> o, Layout l, String figure, String what, Object value)
            throws java.io.IOException {
        System.out.printf(Locale.ROOT, "%-18s %-6s %-36s %s%n", l.name(), figure, what, value);
        DrainBench.BenchOptions.appendResult(o, l.name(), figure, what, value);
    }
}
