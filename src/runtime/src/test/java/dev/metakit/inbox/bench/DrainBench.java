package dev.metakit.inbox.bench;

import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.camel.ProducerTemplate;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static org.awaitility.Awaitility.await;

/**
 * Drain benchmark (BENCHMARKS.md, "Worker and reconcile throughput"; not a test: run by {@code bench/worker-bench.sh drain},
 * never by {@code mvn verify}).
 *
 * <p>The real bundle ({@link RunningInbox}: camel-main, application.properties, routes/) on the test database (embedded
 * PostgreSQL, or a database of its own on the server named by {@code METAKIT_TEST_DATABASE_URL}), pointed at the sandbox's REST API ({@link BenchApi}: N accounts, some open
 * positions each, a fixed response latency, no faults). Each round puts R rows into {@code webhook_inbox} with one
 * {@code insert ... select generate_series} (one transaction, so all become visible at once): signed-looking keys
 * {@code <t>:<64 hex>}, {@code position.modified} bodies for accounts 1..N interleaved (row g is account
 * {@code 1 + (g-1) % N}, in next_attempt_at order: the worst case for a claim that takes the next rows in order),
 * three in four naming a ticket the market has open, the rest a ticket it never had. Then it rings the worker's
 * doorbell and times until no row is unprocessed. Figures: rows/s, reconcile API calls (positions + deals) per row,
 * the most API requests the sandbox served at once, rows failed.
 *
 * <pre>
 * java -cp ... dev.metakit.inbox.bench.DrainBench [--rows 100000] [--accounts 1000] [--latency-ms 20]
 *   [--open-per-account 2] [--rounds 3] [--warmup-rows 10000] [--api-concurrency 8] [--worker-concurrency 8]
 *   [--batch-size 500] [--claim-max-rows 5000] [--result-file results.tsv] [--label drain]
 * </pre>
 */
public final class DrainBench {

    public static void main(String[] args) throws Exception {
        Map<String, String> o = BenchOptions.parse(args, "drain", Map.of("rows", "100000", "accounts", "1000",
                "warmup-rows", "10000", "worker-concurrency", "8", "batch-size", "500", "claim-max-rows", "5000",
                "timeout-s", "900"));
        int rows = Integer.parseInt(o.get("rows"));
        int accounts = Integer.parseInt(o.get("accounts"));
        int openPer = Integer.parseInt(o.get("open-per-account"));
        int rounds = Integer.parseInt(o.get("rounds"));
        int warmupRows = Integer.parseInt(o.get("warmup-rows"));

        DataSource ds = BenchOptions.quietEmptyDatabase();
        try (BenchApi api = new BenchApi(accounts, openPer, Duration.ofMillis(Long.parseLong(o.get("latency-ms"))),
                Integer.parseInt(o.get("api-threads")))) {
            api.requireTickets(99_300_000L);
            // the periodic reconcile fires at startup: a run "just now" keeps it (and its API calls) out of the drain
            TestDatabase.exec(ds, "insert into reconcile_runs (trigger, accounts_total, finished_at)"
                    + " values ('periodic', 0, now())");
            Map<String, String> p = new LinkedHashMap<>();
            p.put("metakit.api.url", api.api.baseUrl().toString());
            p.put("metakit.api.key", BenchApi.API_KEY);
            p.put("metakit.reconcile.interval", "PT1H");
            p.put("metakit.status.interval", "PT1H");
            p.put("metakit.api.concurrency", o.get("api-concurrency"));
            p.put("metakit.worker.concurrency", o.get("worker-concurrency"));
            p.put("metakit.worker.batch-size", o.get("batch-size"));
            p.put("metakit.worker.claim-max-rows", o.get("claim-max-rows"));
            try (RunningInbox inbox = RunningInbox.start(p)) {
                ProducerTemplate template = inbox.camelContext().createProducerTemplate();
                System.out.printf(Locale.ROOT, "drain: %d rows x %d rounds (+ warm-up %d), %d accounts, %d open each,"
                                + " API latency %s ms, api concurrency %s, worker concurrency %s, batch %s, claim max %s%n",
                        rows, rounds, warmupRows, accounts, openPer, o.get("latency-ms"), o.get("api-concurrency"),
                        o.get("worker-concurrency"), o.get("batch-size"), o.get("claim-max-rows"));
                for (int round = warmupRows > 0 ? 0 : 1; round <= rounds; round++) {
                    int n = round == 0 ? warmupRows : rows;
                    Result r = round(ds, api, template, round, n, accounts, openPer,
                            Duration.ofSeconds(Long.parseLong(o.get("timeout-s"))));
                    String line = String.format(Locale.ROOT,
                            "%s round %s: %d rows in %.2f s = %.0f rows/s; API calls %d (positions %d, deals %d)"
                                    + " = %.4f per row; max in flight %d (configured %s); failed %d; open positions"
                                    + " %d/%d; insert %.2f s",
                            o.get("label"), round == 0 ? "warm-up" : round, n, r.seconds, n / r.seconds, r.calls,
                            r.positionsCalls, r.dealsCalls, (double) r.calls / n, r.maxInFlight,
                            o.get("api-concurrency"), r.failed, r.openPositions, (long) accounts * openPer,
                            r.insertSeconds);
                    System.out.println(line);
                    if (round > 0) {
                        BenchOptions.appendResult(o, round, n, accounts, String.format(Locale.ROOT, "%.3f", r.seconds),
                                String.format(Locale.ROOT, "%.0f", n / r.seconds), r.calls,
                                String.format(Locale.ROOT, "%.4f", (double) r.calls / n), r.maxInFlight,
                                o.get("api-concurrency"), r.failed);
                    }
                }
                System.out.println("sandbox API calls by endpoint and status: " + api.callsLine());
            }
        }
        System.exit(0);
    }

    record Result(double seconds, long calls, long positionsCalls, long dealsCalls, int maxInFlight, long failed,
                  long openPositions, double insertSeconds) {
    }

    static Result round(DataSource ds, BenchApi api, ProducerTemplate template, int round, int n, int accounts,
                        int openPer, Duration timeout) throws SQLException, InterruptedException {
        TestDatabase.exec(ds, "truncate webhook_inbox, positions, accounts");
        long i0 = System.nanoTime();
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("""
                insert into webhook_inbox (delivery_key, event, account_id, body, received_at, next_attempt_at)
                select (extract(epoch from now())::bigint - 1) || ':'
                           || encode(sha256(convert_to('drain-bench ' || ? || ' ' || g, 'UTF8')), 'hex'),
                       'position.modified', a,
                       json_build_object('event', 'position.modified', 'account_id', a,
                           'created_at', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                           'data', json_build_object('ticket', t, 'symbol', 'EURUSD', 'type', 'buy',
                               'volume', 0.10, 'sl', 0, 'tp', 0))::text,
                       now() - (? - g) * interval '10 microseconds',
                       now() - (? - g) * interval '10 microseconds'
                  from generate_series(1, ?) g,
                       lateral (select 1 + (g - 1) % ? as a) acc,
                       lateral (select case when ? > 0 and g % 4 <> 0
                                            then 99300000 + (a - 1) * ? + (g / ?) % greatest(?, 1)
                                            else 70000000 + g end as t) tk""")) {
            TestDatabase.bind(ps, System.nanoTime() + "-" + round, n, n, n, accounts, openPer, openPer, accounts,
                    openPer);
            ps.executeUpdate();
        }
        double insertSeconds = (System.nanoTime() - i0) / 1e9;
        long calls0 = api.reconcileCalls();
        long pos0 = api.api.stats().count("positions", null);
        long deals0 = api.api.stats().count("deals", null);
        api.api.stats().resetMaxInFlight();
        long t0 = System.nanoTime();
        template.sendBody("seda:inbox-doorbell?size=1&waitForTaskToComplete=Never&blockWhenFull=false"
                + "&discardWhenFull=true", "");
        await("drained").atMost(timeout).pollInterval(Duration.ofMillis(10)).until(() -> TestDatabase.scalar(ds,
                "select count(*) from webhook_inbox where processed_at is null and failed_at is null") == 0);
        double seconds = (System.nanoTime() - t0) / 1e9;
        long calls = api.reconcileCalls() - calls0;
        return new Result(seconds, calls, api.api.stats().count("positions", null) - pos0,
                api.api.stats().count("deals", null) - deals0, api.api.stats().maxInFlight(),
                TestDatabase.scalar(ds, "select count(*) from webhook_inbox where failed_at is not null"),
                TestDatabase.scalar(ds, "select count(*) from positions where status = 'open'"), insertSeconds);
    }

    private DrainBench() {
    }

    /** Options and small helpers shared by the worker benchmarks. */
    static final class BenchOptions {
        /** The options every worker benchmark takes, with their defaults. */
        private static final Map<String, String> COMMON = Map.of("latency-ms", "20", "open-per-account", "2",
                "rounds", "3", "api-concurrency", "8", "api-threads", "64", "result-file", "");

        /** The common options, the benchmark's own ({@code own}: names and defaults) and its {@code label}. */
        static Map<String, String> parse(String[] args, String label, Map<String, String> own) {
            Map<String, String> defaults = new TreeMap<>(COMMON);
            defaults.putAll(own);
            defaults.put("label", label);
            Map<String, String> o = new TreeMap<>(defaults);
            for (int i = 0; i < args.length; i++) {
                if (!args[i].startsWith("--") || i + 1 >= args.length) {
                    throw new IllegalArgumentException("usage: --name value ...; known: " + defaults.keySet());
                }
                String name = args[i].substring(2);
                if (!o.containsKey(name)) {
                    throw new IllegalArgumentException("unknown option --" + name + "; known: " + defaults.keySet());
                }
                o.put(name, args[++i]);
            }
            return o;
        }

        /** Appends a row (the label, then {@code fields}) to {@code --result-file}, when one is named. */
        static void appendResult(Map<String, String> o, Object... fields) throws IOException {
            if (o.get("result-file").isEmpty()) {
                return;
            }
            StringBuilder row = new StringBuilder(o.get("label"));
            for (Object field : fields) {
                row.append('\t').append(field);
            }
            Files.writeString(Path.of(o.get("result-file")), row.append('\n'), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }

        /**
         * Where a worker benchmark starts: the test database, emptied, with the per-account INFO lines off (as in
         * sandbox mode; the full reconcile's progress lines stay).
         */
        static DataSource quietEmptyDatabase() {
            quietReconcileLogs();
            DataSource ds = TestDatabase.dataSource();
            TestDatabase.truncateAll();
            return ds;
        }

        private static void quietReconcileLogs() {
            org.apache.logging.log4j.core.config.Configurator.setLevel("dev.metakit.inbox.reconcile",
                    org.apache.logging.log4j.Level.WARN);
            org.apache.logging.log4j.core.config.Configurator.setLevel("dev.metakit.inbox.worker",
                    org.apache.logging.log4j.Level.WARN);
            org.apache.logging.log4j.core.config.Configurator.setLevel(
                    "dev.metakit.inbox.reconcile.FullReconcile", org.apache.logging.log4j.Level.INFO);
        }
    }
}
