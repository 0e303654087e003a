package dev.metakit.inbox.bench;

import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.inbox.InstanceLiveness;
import dev.metakit.inbox.support.TestDatabase;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * What one claim costs while rows pile up for accounts that back off (BENCHMARKS.md, "Worker and reconcile
 * throughput"; not a test: run by {@code bench/worker-bench.sh claim}, never by {@code mvn verify}).
 *
 * <p>On the test database: for each pile size P, account 1 backs off for an hour with P rows that arrived since (due by
 * their own time, the oldest in the inbox) and W rows that wait for its retry time ({@code --waiting}); the table is
 * vacuumed and analysed unless {@code --analyze false} (statistics as they may be right after a burst); then, R times, one due row of another account is inserted and claimed
 * ({@link InboxClaims#claim}, the worker's statement, batch 500, at most 5,000 rows), each claim timed from the
 * caller. Figures: the first claim, the median and p90 of the rest, in milliseconds.
 *
 * <pre>
 * java -cp ... dev.metakit.inbox.bench.ClaimBench [--piles 0,10000,50000,200000] [--claims 50] [--waiting 0]
 *   [--analyze true]
 *   [--result-file results.tsv] [--label claim]
 * </pre>
 */
public final class ClaimBench {

    public static void main(String[] args) throws Exception {
        Map<String, String> o = DrainBench.BenchOptions.parse(args, "claim", Map.of("piles", "0,10000,50000,200000",
                "claims", "50", "waiting", "0", "analyze", "true"));
        int waiting = Integer.parseInt(o.get("waiting"));
        boolean analyze = Boolean.parseBoolean(o.get("analyze"));
        int claims = Integer.parseInt(o.get("claims"));
        DataSource ds = TestDatabase.dataSource();
        InboxClaims inbox = new InboxClaims(ds);
        for (String p : o.get("piles").split(",")) {
            int pile = Integer.parseInt(p.trim());
            TestDatabase.truncateAll();
            Claimant self = Claimant.newBoot("claim-bench");
            InstanceLiveness liveness = new InstanceLiveness(ds, self, Duration.ofSeconds(5));
            insert(ds, "pile-", 1, pile, 600);
            TestDatabase.exec(ds, "insert into inbox_account_backoff (account_id, retry_at)"
                    + " values (1, now() + interval '1 hour')");
            if (waiting > 0) {
                // rows that waited for account 1's retry time before the pile arrived
                insert(ds, "waiting-", 1, waiting, 600);
                TestDatabase.exec(ds, "update webhook_inbox set next_attempt_at = now() + interval '1 hour'"
                        + " where delivery_key like 'waiting-%'");
            }
            if (analyze) {
                TestDatabase.exec(ds, "vacuum analyze webhook_inbox");
            }
            double[] ms = new double[claims];
            for (int i = 0; i < claims; i++) {
                insert(ds, "other-" + i + "-", 2 + i, 1, 0);
                liveness.beat(); // the rows claimed before stay this live boot's
                long t0 = System.nanoTime();
                int rows = inbox.claim(self, 500, 5000, Duration.ofMinutes(5)).size();
                ms[i] = (System.nanoTime() - t0) / 1e6;
                if (rows != 1) {
                    throw new IllegalStateException("claim " + i + " took " + rows + " rows, not the one due");
                }
            }
            double[] rest = Arrays.copyOfRange(ms, 1, ms.length);
            Arrays.sort(rest);
            double median = rest[rest.length / 2];
            double p90 = rest[(int) (rest.length * 0.9)];
            System.out.printf(Locale.ROOT, "%s pile %d, waiting %d: first claim %.2f ms, then median %.2f ms,"
                    + " p90 %.2f ms (%d claims)%n", o.get("label"), pile, waiting, ms[0], median, p90, claims);
            DrainBench.BenchOptions.appendResult(o, pile, waiting, analyze, String.format(Locale.ROOT, "%.2f", ms[0]),
                    String.format(Locale.ROOT, "%.2f", median), String.format(Locale.ROOT, "%.2f", p90), claims);
        }
        System.exit(0);
    }

    /** {@code count} pending trade-event rows of {@code account} ({@code prefix} + n), due {@code ageSeconds} ago. */
    private static void insert(DataSource ds, String prefix, long account, int count, int ageSeconds)
            throws Exception {
        if (count == 0) {
            return;
        }
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "insert into webhook_inbox (delivery_key, event, account_id, body, next_attempt_at)"
                        + " select ? || n, 'position.modified', ?, ?, now() - ? * interval '1 second'"
                        + " from generate_series(1, ?) n")) {
            ps.setString(1, prefix + UUID.randomUUID() + "-");
            ps.setLong(2, account);
            ps.setString(3, "{\"event\":\"position.modified\",\"account_id\":" + account
                    + ",\"data\":{\"ticket\":1}}");
            ps.setInt(4, ageSeconds);
            ps.setInt(5, count);
            ps.executeUpdate();
        }
    }

    private ClaimBench() {
    }
}
