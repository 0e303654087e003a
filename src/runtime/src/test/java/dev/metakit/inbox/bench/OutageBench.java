package dev.metakit.inbox.bench;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * What an API outage costs the database while deliveries keep coming (BENCHMARKS.md, "Worker and reconcile
 * throughput"; not a test: run by {@code bench/worker-bench.sh outage}, never by {@code mvn verify}).
 *
 * <p>The real bundle ({@link RunningInbox}) at its defaults, the worker's backoff included (1 s doubling to 300 s),
 * against a MetaKit double ({@link FakeMetaKit}) whose every call answers 500 from the start; the periodic reconcile
 * and the status watch are off (their calls would fail the same way; what is measured is the ingest and the worker's
 * claims). Signed deliveries at a fixed rate over N accounts ({@link SignedLoad}, 4 threads unless {@code --threads}).
 * Every window it prints PostgreSQL's CPU (the server's processes, read from /proc through the backend's parent: an
 * embedded or local server only), the JVM's, the deliveries acked and their p99, the pending rows, and those of them
 * whose account backs off (held back by the account's one row; a claim reads none of them).
 *
 * <pre>
 * java -cp ... dev.metakit.inbox.bench.OutageBench [--seconds 120] [--window-s 10] [--rate 400] [--accounts 100]
 *   [--threads 4] [--result-file results.tsv] [--label outage]
 * </pre>
 */
public final class OutageBench {

    public static void main(String[] args) throws Exception {
        Map<String, String> o = DrainBench.BenchOptions.parse(args, "outage", Map.of("seconds", "120", "window-s", "10",
                "rate", "400", "accounts", "100", "threads", "4"));
        int threads = Integer.parseInt(o.get("threads"));
        int seconds = Integer.parseInt(o.get("seconds"));
        int window = Integer.parseInt(o.get("window-s"));
        int rate = Integer.parseInt(o.get("rate"));
        int accounts = Integer.parseInt(o.get("accounts"));
        DrainBench.BenchOptions.quietReconcileLogs();

        DataSource ds = TestDatabase.dataSource();
        TestDatabase.truncateAll();
        Optional<ProcessHandle> server = serverProcess(ds);
        try (FakeMetaKit metakit = FakeMetaKit.onCleanDatabase(accounts)) {
            metakit.outage(500);
            Map<String, String> p = new LinkedHashMap<>();
            p.put("metakit.api.url", metakit.url());
            p.put("metakit.api.key", FakeMetaKit.API_KEY);
            p.put("metakit.reconcile.interval", "PT1H");
            p.put("metakit.status.interval", "PT1H");
            try (RunningInbox inbox = RunningInbox.start(p)) {
                System.out.printf(Locale.ROOT, "outage: %d s of deliveries at %d/s over %d accounts, every API call"
                        + " answered 500; windows of %d s%n", seconds, rate, accounts, window);
                SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, threads, rate / threads,
                        accounts)
                        .start();
                long start = System.nanoTime();
                double serverCpu0 = cpuSeconds(server);
                double jvmCpu0 = cpuSeconds(Optional.of(ProcessHandle.current()));
                int acked0 = 0;
                double serverTotal = 0;
                for (int w = 1; w * window <= seconds; w++) {
                    long end = start + Duration.ofSeconds((long) w * window).toNanos();
                    long left;
                    while ((left = end - System.nanoTime()) > 0) {
                        Thread.sleep(Math.max(1, left / 1_000_000)); // the window's length, not a condition
                    }
                    double serverCpu = cpuSeconds(server);
                    double jvmCpu = cpuSeconds(Optional.of(ProcessHandle.current()));
                    List<SignedLoad.Sent> sent = load.results();
                    List<SignedLoad.Sent> inWindow = sent.subList(Math.min(acked0, sent.size()), sent.size());
                    int acked = (int) inWindow.stream().filter(SignedLoad.Sent::acked).count();
                    long[] rows = rows(ds);
                    double serverCores = (serverCpu - serverCpu0) / window;
                    serverTotal += serverCpu - serverCpu0;
                    String line = String.format(Locale.ROOT, "%s t=%ds: acked %d (%.0f/s), not acked %d, p99 %.1f ms;"
                                    + " PostgreSQL %.3f cores, JVM %.3f cores; pending %d, of which their account backs"
                                    + " off %d; accounts backing off %d",
                            o.get("label"), w * window, acked, (double) acked / window, inWindow.size() - acked,
                            SignedLoad.percentileMicros(inWindow, 99) / 1000.0, serverCores,
                            (jvmCpu - jvmCpu0) / window, rows[0], rows[1], rows[2]);
                    System.out.println(line);
                    DrainBench.BenchOptions.appendResult(o, w * window, rate, accounts, acked,
                            inWindow.size() - acked, String.format(Locale.ROOT, "%.3f", serverCores),
                            String.format(Locale.ROOT, "%.3f", (jvmCpu - jvmCpu0) / window), rows[0], rows[1]);
                    serverCpu0 = serverCpu;
                    jvmCpu0 = jvmCpu;
                    acked0 = sent.size();
                }
                List<SignedLoad.Sent> all = load.stop();
                long notAcked = all.stream().filter(s -> !s.acked()).count();
                System.out.printf(Locale.ROOT, "%s: %d deliveries, %d not acked, PostgreSQL %.1f CPU seconds over the"
                                + " run (%.3f cores); API calls %d%n", o.get("label"), all.size(), notAcked,
                        serverTotal, serverTotal / (seconds - seconds % window), metakit.totalCalls());
            }
        }
        System.exit(0);
    }

    /** Pending rows; of them, those whose account backs off; the accounts backing off. */
    private static long[] rows(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("""
                select (select count(*) from webhook_inbox where processed_at is null and failed_at is null),
                       (select count(*) from webhook_inbox w join inbox_account_backoff b using (account_id)
                         where w.processed_at is null and w.failed_at is null and b.retry_at > now()),
                       (select count(*) from inbox_account_backoff where retry_at > now())""")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
        }
    }

    /** The PostgreSQL server's postmaster, the parent of a backend: empty when the server is not on this machine. */
    private static Optional<ProcessHandle> serverProcess(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select pg_backend_pid()")) {
            rs.next();
            return ProcessHandle.of(rs.getLong(1)).flatMap(ProcessHandle::parent);
        }
    }

    /** CPU seconds of the process and its descendants so far (NaN when unknown). */
    private static double cpuSeconds(Optional<ProcessHandle> process) {
        if (process.isEmpty()) {
            return Double.NaN;
        }
        ProcessHandle root = process.get();
        long nanos = root.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
        if (root.pid() != ProcessHandle.current().pid()) {
            nanos += root.descendants().mapToLong(h -> h.info().totalCpuDuration().map(Duration::toNanos).orElse(0L))
                    .sum();
        }
        return nanos / 1e9;
    }

    private OutageBench() {
    }
}
