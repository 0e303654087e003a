package dev.metakit.inbox.bench;

import dev.metakit.inbox.bench.DrainBench.BenchOptions;
import dev.metakit.inbox.reconcile.FullReconcile;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.apache.camel.ProducerTemplate;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Full reconcile benchmark (BENCHMARKS.md, "Worker and reconcile throughput"; not a test: run by
 * {@code bench/worker-bench.sh reconcile}, never by {@code mvn verify}).
 *
 * <p>The real bundle ({@link RunningInbox}) on the test database, pointed at the sandbox's REST API ({@link BenchApi}:
 * N accounts, some open positions each, a fixed response latency, no faults). The N accounts are known to the
 * consumer (rows in {@code accounts}); each round sends one exchange to {@code direct:full-reconcile} (the route the
 * periodic Quartz trigger and the status watch use; trigger {@code bench}, so the once-per-period check does not
 * skip it) and times it to its end. A full reconcile reads positions and deals (full scan) of every account: about 2
 * calls per account. Figures: wall time; API calls; the bound {@code calls × latency ÷ concurrency} with concurrency
 * {@code min(METAKIT_API_CONCURRENCY, METAKIT_RECONCILE_CONCURRENCY)} and wall / bound (target ≤ 1.5); the most
 * requests the sandbox served at once (must not exceed the configured concurrency); 429s; accounts failed.
 * Round 1 is the first scan (every position inserted), later rounds find nothing changed.
 *
 * <pre>
 * java -cp ... dev.metakit.inbox.bench.ReconcileBench [--accounts 10000] [--latency-ms 20] [--open-per-account 2]
 *   [--rounds 3] [--api-concurrency 8] [--reconcile-concurrency 8] [--result-file results.tsv] [--label reconcile]
 * </pre>
 */
public final class ReconcileBench {

    public static void main(String[] args) throws Exception {
        Map<String, String> o = BenchOptions.parse(args, "reconcile",
                Map.of("accounts", "10000", "reconcile-concurrency", "8"));
        int accounts = Integer.parseInt(o.get("accounts"));
        int rounds = Integer.parseInt(o.get("rounds"));
        long latencyMs = Long.parseLong(o.get("latency-ms"));
        int apiConcurrency = Integer.parseInt(o.get("api-concurrency"));
        int reconcileConcurrency = Integer.parseInt(o.get("reconcile-concurrency"));
        int concurrency = Math.min(apiConcurrency, reconcileConcurrency);

        DataSource ds = BenchOptions.quietEmptyDatabase();
        try (BenchApi api = new BenchApi(accounts, Integer.parseInt(o.get("open-per-account")),
                Duration.ofMillis(latencyMs), Integer.parseInt(o.get("api-threads")))) {
            TestDatabase.exec(ds, "insert into reconcile_runs (trigger, accounts_total, finished_at)"
                    + " values ('periodic', 0, now())");
            TestDatabase.exec(ds, "insert into accounts (account_id) select generate_series(1, " + accounts + ")");
            Map<String, String> p = new LinkedHashMap<>();
            p.put("metakit.api.url", api.api.baseUrl().toString());
            p.put("metakit.api.key", BenchApi.API_KEY);
            p.put("metakit.reconcile.interval", "PT1H");
            p.put("metakit.status.interval", "PT1H");
            p.put("metakit.api.concurrency", String.valueOf(apiConcurrency));
            p.put("metakit.reconcile.concurrency", String.valueOf(reconcileConcurrency));
            try (RunningInbox inbox = RunningInbox.start(p)) {
                ProducerTemplate template = inbox.camelContext().createProducerTemplate();
                System.out.printf(Locale.ROOT, "reconcile: %d accounts x %d rounds, %s open each, API latency %d ms,"
                                + " api concurrency %d, reconcile concurrency %d%n", accounts, rounds,
                        o.get("open-per-account"), latencyMs, apiConcurrency, reconcileConcurrency);
                for (int round = 1; round <= rounds; round++) {
                    long calls0 = api.reconcileCalls();
                    long pos0 = api.api.stats().count("positions", null);
                    long r429 = api.api.stats().count("positions", 429) + api.api.stats().count("deals", 429);
                    api.api.stats().resetMaxInFlight();
                    long t0 = System.nanoTime();
                    template.sendBodyAndHeader(InboxToPositionRoutes.FULL_RECONCILE, "", FullReconcile.TRIGGER_HEADER, "bench");
                    double seconds = (System.nanoTime() - t0) / 1e9;
                    long calls = api.reconcileCalls() - calls0;
                    long positionsCalls = api.api.stats().count("positions", null) - pos0;
                    long tooMany = api.api.stats().count("positions", 429) + api.api.stats().count("deals", 429) - r429;
                    double bound = calls * latencyMs / 1000.0 / concurrency;
                    long failed = TestDatabase.scalar(ds,
                            "select accounts_failed from reconcile_runs where trigger = 'bench' order by run_id desc limit 1");
                    long done = TestDatabase.scalar(ds,
                            "select accounts_done from reconcile_runs where trigger = 'bench' order by run_id desc limit 1");
                    int maxInFlight = api.api.stats().maxInFlight();
                    System.out.printf(Locale.ROOT, "%s round %d: %d accounts (%d done, %d failed) in %.2f s; API calls"
                                    + " %d (positions %d, deals %d; %.2f per account); bound %d x %d ms / %d = %.2f s;"
                                    + " wall/bound %.3f (target <= 1.5: %s); max in flight %d (configured %d: %s);"
                                    + " 429s %d%n", o.get("label"), round, accounts, done, failed, seconds, calls,
                            positionsCalls, calls - positionsCalls, (double) calls / accounts, calls, latencyMs,
                            concurrency, bound, seconds / bound, seconds / bound <= 1.5 ? "met" : "NOT met",
                            maxInFlight, concurrency, maxInFlight <= concurrency ? "honoured" : "EXCEEDED", tooMany);
                    BenchOptions.appendResult(o, round, accounts, String.format(Locale.ROOT, "%.3f", seconds), calls,
                            String.format(Locale.ROOT, "%.3f", bound),
                            String.format(Locale.ROOT, "%.3f", seconds / bound), maxInFlight, concurrency, failed,
                            tooMany);
                }
                System.out.println("sandbox API calls by endpoint and status: " + api.callsLine());
            }
        }
        System.exit(0);
    }

    private ReconcileBench() {
    }
}
