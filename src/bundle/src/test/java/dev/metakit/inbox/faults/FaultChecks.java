package dev.metakit.inbox.faults;

import dev.metakit.inbox.sandbox.DeliverySchedule;
import dev.metakit.inbox.support.HealthWatch;
import dev.metakit.inbox.support.TestDatabase;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;

/**
 * What the database fault tests read back from the server that holds the inbox, how they summarise probes, and the
 * bounds of time they hold the bundle to: each set by what it tells apart, never by how fast the machine is (the
 * seconds a recovery takes are measured in BENCHMARKS.md, "Recovery"; CI runs on loaded machines).
 */
final class FaultChecks {
    /**
     * MetaKit's wait for an answer (docs/metakit-contract.md), checked on the bundle's own ack meter
     * ({@code RunningInbox.slowestAnswer}, a delivery's arrival to its answer): a client's clock adds the connect and
     * the scheduling of a loaded machine.
     */
    static final Duration METAKIT_ANSWER_WAIT = DeliverySchedule.contract().requestTimeout();
    /**
     * The time a recovery is given (every acked row processed, a 2xx again): the bundle acting by itself on a return
     * takes seconds, where a row behind a claim nobody works on waits the lease (120 s by default) and a bundle that
     * missed the return waits for a restart; a quarter of the lease leaves a starved machine its seconds.
     */
    static final Duration RECOVERY_BOUND = Duration.ofSeconds(30);

    private FaultChecks() {
    }

    /** Those of {@code acked} that have no row on {@code server}. */
    static Set<String> missing(DataSource server, Set<String> acked) {
        Set<String> missing = new HashSet<>(acked);
        missing.removeAll(TestDatabase.strings(server, "select delivery_key from webhook_inbox"));
        return missing;
    }

    /** How long until every one of {@code keys} is processed on {@code server} (polled every 100 ms). */
    static Duration untilProcessed(DataSource server, Set<String> keys, Duration patience) {
        long from = System.nanoTime();
        await().atMost(patience).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> processed(server, keys) == keys.size());
        return Duration.ofNanos(System.nanoTime() - from);
    }

    private static long processed(DataSource server, Set<String> keys) throws SQLException {
        try (var c = server.getConnection(); var ps = c.prepareStatement(
                "select count(*) from webhook_inbox where delivery_key = any(?) and processed_at is not null")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    static Map<Integer, Long> probeStatuses(List<HealthWatch.Probe> probes) {
        return probes.stream().collect(Collectors.groupingBy(HealthWatch.Probe::status, TreeMap::new,
                Collectors.counting()));
    }

    /** The p-th percentile (0..100) of the probes' answer times, ms; 0 when there are none. */
    static long probeMillis(List<HealthWatch.Probe> probes, double p) {
        long[] millis = probes.stream().mapToLong(HealthWatch.Probe::millis).sorted().toArray();
        if (millis.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(p / 100.0 * millis.length) - 1;
        return millis[Math.max(0, Math.min(millis.length - 1, index))];
    }

    static String oneLine(String body) {
        return body == null ? "" : body.replaceAll("\\s+", " ");
    }
}
