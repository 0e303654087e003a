package dev.metakit.inbox.bench;

import dev.metakit.inbox.db.DayPartitions;
import dev.metakit.inbox.db.InboxMigrations;
import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InboxIntake;
import dev.metakit.inbox.inbox.InboxKey;
import dev.metakit.inbox.inbox.InboxRow;
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
 *   <li>{@code drop}: one day of {@code --day-rows} processed rows (one in 10,000 failed, a dead letter), made by
 *       generate_series, retired: the build before's batched DELETE (5,000 rows a statement) against this build's
 *       retention run (the days ahead made, the day's dead letters moved into the leftover partition and the day
 *       dropped, the kept partitions pruned); wall time, and PostgreSQL's CPU (of every process of the server, from
 *       /proc, before and after); for this build also the drop alone ({@code DayPartitions.retire}: its looks, the
 *       leftover partition's range proved, the locked transaction), and the locked transaction's own wall time;</li>
 *   <li>{@code backlog}: this build only: one day of {@code --day-rows} rows, one in 8 still pending (an API
 *       outage's backlog), its time up: the drop's look (the day waits, nothing copied); then the pending rows
 *       processed and the day dropped, the drop alone timed as above;</li>
 *   <li>{@code cycle}: {@code --cycles} simulated days of {@code --cycle-rows} rows each, retention of 2 days run after
 *       each (a plain VACUUM after it, autovacuum's best case for the DELETE), the table's size with its indexes;</li>
 *   <li>{@code claim}: the worker's claim ({@link InboxClaims#claim}, batch 500) of 100 due rows, median of 20, with
 *       nothing retained and with the cycles' rows retained (this build's claim on both: the one table gets the
 *       column {@code signed_at}, unindexed, which the claim names).</li>
 *   <li>{@code keyed}: this build only, the inbox with 17 and then 40 partitions ({@code --keyed-day-rows} rows in
 *       each day): the worker's statements on the 100 rows it holds, a lease renewal ({@link InboxClaims#renew})
 *       and the look at who holds them ({@link InboxClaims#heldByOthers}), beside the build before's same statements
 *       by key alone (quoted below), on one pooled connection; median wall of 200 each, and PostgreSQL's CPU per
 *       statement over them.</li>
 * </ul>
 * <pre>
 * java -cp ... dev.metakit.inbox.bench.RetentionBench [--wal-rows 20000] [--day-rows 2000000] [--cycles 12]
 *   [--cycle-rows 200000] [--keyed-day-rows 50000]
 *   [--parts wal,drop,backlog,cycle,keyed] [--result-file results.tsv] [--label retention]
 * </pre>
 */
public final class RetentionBench {
    /** InboxAdmin's prune of the build before (one table): one bounded batch, repeated until a short one */
    private static final String ONE_TABLE_PRUNE = """
            delete from webhook_inbox where delivery_key in (
                select delivery_key from webhook_inbox
                 where processed_at is not null and failed_at is null and received_at < ?
                 limit ? for update skip locked)""";
    /** InboxClaims' lease renewal of the build before: by key alone */
    private static final String BY_KEY_RENEW = """
            update webhook_inbox set claimed_until = now() + ?::interval
             where delivery_key = any(?) and claim_token = ? and processed_at is null""";
    /** InboxClaims' look at who holds rows, of the build before: by key alone */
    private static final String BY_KEY_HELD = """
            select count(*) from webhook_inbox
             where delivery_key = any(?) and claim_token is not null and claim_token <> ?""";
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
                "day-rows", "2000000", "cycles", "12", "cycle-rows", "200000", "keyed-day-rows", "50000", "parts",
                "wal,drop,backlog,cycle,keyed"));
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
            Instant now = day0.plus(8, ChronoUnit.DAYS);
            long cpu0 = serverCpuMillis(l.db());
            long t0 = System.nanoTime();
            if (l.partitioned()) {
                DayPartitions.INBOX.makeAhead(l.db(), now);
                dropAlone(o, l, "drop", now.minus(7, ChronoUnit.DAYS));
            }
            retire(l, day0.plus(1, ChronoUnit.DAYS), now, "P7D");
            long wallMs = (System.nanoTime() - t0) / 1_000_000;
            long cpuMs = serverCpuMillis(l.db()) - cpu0;
            print(o, l, "drop", o.get("day-rows") + " rows: wall ms", wallMs);
            print(o, l, "drop", o.get("day-rows") + " rows: PostgreSQL CPU ms", cpuMs);
            print(o, l, "drop", "rows left", scalar(l.db(), "select count(*) from webhook_inbox"));
        }
        if (parts.contains("backlog")) {
            Layout l = layouts.get(1);
            truncate(l);
            // the day after day0: the drop above retired day0 (its time, now the leftover partition's)
            Instant day = day0.plus(1, ChronoUnit.DAYS);
            fillDay(l, day, Integer.parseInt(o.get("day-rows")));
            exec(l.db(), "update webhook_inbox set processed_at = null where substr(md5(delivery_key), 1, 1) < '2'");
            exec(l.db(), "vacuum analyze webhook_inbox");
            Instant cutoff = day.plus(1, ChronoUnit.DAYS);
            DayPartitions.INBOX.makeAhead(l.db(), cutoff.plus(7, ChronoUnit.DAYS));
            print(o, l, "backlog", "pending rows in the day",
                    scalar(l.db(), "select count(*) from webhook_inbox where processed_at is null and failed_at is null"));
            dropAlone(o, l, "backlog", cutoff);
            exec(l.db(), "update webhook_inbox set processed_at = now() where processed_at is null and failed_at is null");
            exec(l.db(), "vacuum analyze webhook_inbox");
            dropAlone(o, l, "backlog", cutoff);
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
        if (parts.contains("keyed")) {
            int dayRows = Integer.parseInt(o.get("keyed-day-rows"));
            keyed(o, layouts.get(1), 17, dayRows);
            keyed(o, layouts.get(1), 40, dayRows);
        }
    }

    /** {@code DayPartitions.retire} alone, the days ahead made before: wall, PostgreSQL's CPU, the locked part */
    private static void dropAlone(Map<String, String> o, Layout l, String figure, Instant cutoff) throws Exception {
        long cpu0 = serverCpuMillis(l.db());
        long t0 = System.nanoTime();
        DayPartitions.Retired r = DayPartitions.INBOX.retire(l.db(), cutoff, InboxAdmin.UNFINISHED);
        long wallMs = (System.nanoTime() - t0) / 1_000_000;
        long cpuMs = serverCpuMillis(l.db()) - cpu0;
        print(o, l, figure, "the drop alone: dropped, moved, waiting", r.dropped() + "\t" + r.rowsMoved() + "\t"
                + r.waiting());
        print(o, l, figure, "the drop alone: wall ms", wallMs);
        print(o, l, figure, "the drop alone: PostgreSQL CPU ms", cpuMs);
        print(o, l, figure, "the drop alone: locked transaction wall ms", r.lockedMillis());
    }

    /**
     * The worker's statements on the 100 rows it holds, by key and signed_at (this build) and by key alone (the build
     * before), with {@code partitions} partitions of {@code dayRows} rows each.
     */
    private static void keyed(Map<String, String> o, Layout l, int partitions, int dayRows) throws Exception {
        truncate(l);
        try (Connection c = l.db().getConnection()) {
            // one day more at a time: the days ahead of a clock a week before the last day's end
            for (List<DayPartitions.Partition> all = DayPartitions.INBOX.partitions(c); all.size() < partitions;
                 all = DayPartitions.INBOX.partitions(c)) {
                Instant lastEnd = all.get(all.size() - 1).to();
                DayPartitions.INBOX.makeAhead(l.db(), lastEnd.minus(DayPartitions.DAYS_AHEAD, ChronoUnit.DAYS));
            }
            List<DayPartitions.Partition> all = DayPartitions.INBOX.partitions(c);
            for (DayPartitions.Partition p : all) {
                if (p.from() != null) {
                    exec(l.db(), "insert into webhook_inbox (delivery_key, account_id, body, signed_at, processed_at)"
                            + " select extract(epoch from '" + p.from() + "'::timestamptz)::bigint + g || ':'"
                            + " || md5(g::text), g % 1000, '{}', '" + p.from() + "'::timestamptz + g * interval"
                            + " '86399 seconds' / " + dayRows + ", now() from generate_series(1, " + dayRows + ") g");
                }
            }
            exec(l.db(), "vacuum analyze webhook_inbox");
            int n = all.size();
            Claimant self = Claimant.newBoot("keyed-bench");
            new InstanceLiveness(l.db(), self, Duration.ofMinutes(5)).beat();
            exec(l.db(), "insert into webhook_inbox (delivery_key, event, account_id, body, signed_at) select 'held-'"
                    + " || g, 'position.opened', 200000 + g, '{}', '" + all.get(n - 1).from() + "'"
                    + " from generate_series(1, 100) g");
            com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
            config.setDataSource(l.db());
            config.setMaximumPoolSize(1);
            try (com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource(config)) {
                InboxClaims claims = new InboxClaims(pool);
                List<InboxKey> keys = claims.claim(self, 500, Duration.ofMinutes(5)).stream()
                        .map(InboxRow::inboxKey).toList();
                Object[] deliveryKeys = keys.stream().map(InboxKey::deliveryKey).toArray();
                print(o, l, "keyed", n + " partitions: rows, rows held", scalar(l.db(),
                        "select count(*) from webhook_inbox") + "\t" + keys.size());
                timed(o, l, n + " partitions: renew by key (before)", pool, () -> {
                    try (Connection p = pool.getConnection(); PreparedStatement s = p.prepareStatement(BY_KEY_RENEW)) {
                        s.setString(1, "5 minutes");
                        s.setArray(2, p.createArrayOf("text", deliveryKeys));
                        s.setObject(3, self.bootToken());
                        s.executeUpdate();
                    }
                });
                timed(o, l, n + " partitions: renew by key and signed_at", pool,
                        () -> claims.renew(self, keys, Duration.ofMinutes(5)));
                timed(o, l, n + " partitions: held by others, by key (before)", pool, () -> {
                    try (Connection p = pool.getConnection(); PreparedStatement s = p.prepareStatement(BY_KEY_HELD)) {
                        s.setArray(1, p.createArrayOf("text", deliveryKeys));
                        s.setObject(2, self.bootToken());
                        s.executeQuery().close();
                    }
                });
                timed(o, l, n + " partitions: held by others, by key and signed_at", pool,
                        () -> claims.heldByOthers(self, keys));
            }
        }
    }

    @FunctionalInterface
    private interface Statement {
        void run() throws SQLException;
    }

    /** 20 runs to warm up (the server's plan cache: custom plans, then the generic one), then 200 timed */
    private static void timed(Map<String, String> o, Layout l, String what, DataSource db, Statement statement)
            throws Exception {
        for (int i = 0; i < 20; i++) {
            statement.run();
        }
        double[] ms = new double[200];
        long cpu0 = serverCpuMillis(db);
        for (int i = 0; i < ms.length; i++) {
            long t0 = System.nanoTime();
            statement.run();
            ms[i] = (System.nanoTime() - t0) / 1e6;
        }
        double cpuPer = (double) (serverCpuMillis(db) - cpu0) / ms.length;
        Arrays.sort(ms);
        print(o, l, "keyed", what + ": median ms, PostgreSQL CPU ms each",
                String.format(Locale.ROOT, "%.3f\t%.3f", ms[ms.length / 2], cpuPer));
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

    /**
     * {@code rows} processed deliveries signed and received over the day from {@code day}, one in 10,000 failed (a
     * dead letter)
     */
    private static void fillDay(Layout l, Instant day, int rows) throws SQLException {
        String signed = l.partitioned() ? ", signed_at" : "";
        String at = "'" + day + "'::timestamptz + g * interval '86399 seconds' / " + rows;
        exec(l.db(), "insert into webhook_inbox (delivery_key, event, account_id, body, received_at, processed_at,"
                + " failed_at" + signed + ") select extract(epoch from " + at + ")::bigint || ':' || md5(g::text || '" + day
                + "'), 'position.opened', g % 1000, '" + BODY + "', " + at + ", case when g % 10000 = 0 then null"
                + " else " + at + " + interval '1 second' end, case when g % 10000 = 0 then " + at + " end"
                + (l.partitioned() ? ", " + at : "")
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
