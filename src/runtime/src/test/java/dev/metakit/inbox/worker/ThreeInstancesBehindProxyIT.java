package dev.metakit.inbox.worker;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxAudit;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.TcpProxy;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three instances of the shaded jar on one PostgreSQL behind one address (a round-robin TCP proxy), under signed
 * traffic from several clients with duplicates racing on different instances, and a kill -9 of one instance mid-traffic
 * (the one that ran the last periodic reconcile, while it holds claimed rows). {@link ScaleOutTest} covers two
 * in-process instances without a kill; this is the deployment shape of docs/deployment.md's "Deployment shape for
 * more instances", as processes.
 */
class ThreeInstancesBehindProxyIT {
    private static final int ACCOUNTS = 10;
    /** a dead instance's claimed rows are the survivors' within 10 s (with the default 120 s lease) */
    private static final Duration TAKEOVER = Duration.ofSeconds(10);
    private static final Duration INTERVAL = Duration.ofSeconds(3);
    /** every 10th delivery is also sent to all three instances directly, at the same moment */
    private static final int DUPLICATE_EVERY = 10;
    /** after the kill, requests this much later must no longer reach the dead instance through the proxy */
    private static final Duration FAILOVER_GRACE = Duration.ofSeconds(1);

    @TempDir
    Path workDir;

    private FakeMetaKit metakit;
    private InboxAudit audit;
    private final List<InboxProcess> instances = new ArrayList<>();
    private TcpProxy proxy;

    @BeforeEach
    void start() {
        metakit = FakeMetaKit.onCleanDatabase(ACCOUNTS);
        audit = InboxAudit.install();
        // slow enough that an instance always has claimed rows in flight when it is killed
        metakit.latency(100);
        for (int i = 1; i <= 3; i++) {
            instances.add(new InboxProcess(workDir, metakit.url(), Map.of(
                    // three processes on one host: each its own id (the default, the host name, is the same for all)
                    "METAKIT_INSTANCE_ID", name(i),
                    "DATABASE_URL", TestDatabase.jdbcUrl(name(i)),
                    "METAKIT_RECONCILE_INTERVAL", "PT" + INTERVAL.toSeconds() + "S",
                    "METAKIT_STATUS_INTERVAL", "PT1H")));
        }
        InboxProcess.startAll(instances);
        proxy = new TcpProxy(instances.stream().map(p -> p.webhookUri().getPort()).toList());
    }

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        InboxProcess.closeAll(instances);
        metakit.close();
        audit.close();
    }

    private static String name(int i) {
        return "inbox-" + i;
    }

    @Test
    void dedupeIsExactEveryRowIsWorkedOnceThePeriodicRunIsOncePerPeriodAndAKilledInstancesRowsAreTakenOver()
            throws Exception {
        List<URI> direct = instances.stream().map(InboxProcess::webhookUri).toList();
        SignedLoad load = new SignedLoad(proxy.webhookUri(), RunningInbox.SECRET, 6, 40, ACCOUNTS)
                .duplicating(DUPLICATE_EVERY, direct).start();

        // kill the instance that started the last periodic run, at a moment it holds unprocessed claimed rows
        String[] victim = new String[1];
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            // one read of the runs: a run may start between two
            var runs = periodicRuns();
            if (load.count(SignedLoad.Sent::acked) < 300 || runs.size() < 2) {
                return false;
            }
            victim[0] = runs.get(runs.size() - 1).instance();
            return scalar("select count(*) from webhook_inbox w where processed_at is null and claimed_until > now()"
                    + " and claimed_by in (select claimed_by from test_inbox_audit where instance = '" + victim[0]
                    + "')") > 0;
        });
        InboxProcess killed = instances.get(Integer.parseInt(victim[0].substring("inbox-".length())) - 1);
        // the database's clock at the kill: before it, no row is taken from the victim under its lease either
        String killedDbTime = TestDatabase.text("select clock_timestamp()::text");
        killed.kill();
        long killedAt = System.nanoTime();
        // counted after the kill: a run the victim began meanwhile is before it, one it had not committed is gone
        int runsBeforeKill = periodicRuns().size();
        Set<String> orphans = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox"
                + " where processed_at is null and claimed_by in (select claimed_by from test_inbox_audit"
                + " where instance = '" + victim[0] + "')");
        assertThat(orphans).as("rows the killed instance held").isNotEmpty();

        String orphanList = orphans.stream().map(k -> "'" + k + "'").collect(Collectors.joining(","));
        await().atMost(TAKEOVER).pollInterval(Duration.ofMillis(50)).until(() ->
                scalar("select count(*) from webhook_inbox where processed_at is null and delivery_key in ("
                        + orphanList + ")") == 0);
        long takeoverMillis = Duration.ofNanos(System.nanoTime() - killedAt).toMillis();

        // the survivors keep the periodic reconcile going and answer the traffic the dead one got
        await().atMost(Duration.ofSeconds(30)).until(() -> periodicRuns().size() >= runsBeforeKill + 2
                && load.count(s -> s.acked() && s.target().equals(proxy.webhookUri())
                && s.startNanos() > killedAt) >= 300);
        List<SignedLoad.Sent> sent = load.stop();
        await().atMost(Duration.ofSeconds(30)).until(() ->
                scalar("select count(*) from webhook_inbox where processed_at is null") == 0);

        Map<String, List<SignedLoad.Sent>> byKey = sent.stream().collect(Collectors.groupingBy(SignedLoad.Sent::key));
        Set<String> acked = SignedLoad.ackedKeys(sent);
        Set<String> stored = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox");
        Set<String> ackedButMissing = new HashSet<>(acked);
        ackedButMissing.removeAll(stored);
        long duplicated = byKey.values().stream().filter(copies -> copies.size() > 1).count();
        long storedAnswers = sent.stream().filter(s -> "stored".equals(s.answer())).count();
        long duplicateAnswers = sent.stream().filter(s -> "duplicate".equals(s.answer())).count();
        List<Run> runs = periodicRuns();
        System.out.printf("SCALE three instances: sent=%d (keys %d, of which %d sent to 4 addresses at once) "
                        + "statuses=%s (no answer through the proxy %d) stored-answers=%d duplicate-answers=%d rows=%d acked-but-missing=%d "
                        + "proxy connections=%d/%d/%d refused=%d; killed %s holding %d rows, taken over in %d ms "
                        + "(longest hold %d ms); periodic runs %s; one account worked by two instances at once %d times%n",
                sent.size(), byKey.size(), duplicated, SignedLoad.byStatus(sent),
                sent.stream().filter(s -> s.status() == -1 && s.target().equals(proxy.webhookUri())).count(),
                storedAnswers, duplicateAnswers,
                stored.size(), ackedButMissing.size(), proxy.connections(0), proxy.connections(1),
                proxy.connections(2), proxy.refusedConnects(), victim[0], orphans.size(), takeoverMillis,
                InboxAudit.longestHoldMillis(), runs, InboxAudit.accountOverlaps());

        // dedupe is exact across instances: nothing acked is missing, nothing stored that no client sent, and of
        // the copies of one delivery racing on different instances exactly one was stored
        assertThat(ackedButMissing).as("acked but missing").isEmpty();
        assertThat(byKey.keySet()).as("nothing stored that no client sent").containsAll(stored);
        assertThat(duplicated).as("deliveries sent to several instances at once").isGreaterThan(50);
        byKey.forEach((key, copies) -> {
            long storedCopies = copies.stream().filter(s -> "stored".equals(s.answer())).count();
            assertThat(storedCopies).as("copies of %s answered stored", key).isLessThanOrEqualTo(1);
            if (copies.stream().allMatch(s -> s.status() == 200)) {
                assertThat(storedCopies).as("copies of %s answered stored", key).isEqualTo(1);
            }
            if (stored.contains(key) && !acked.contains(key)) {
                assertThat(copies).as("%s stored without a 2xx: its answer was cut by the kill", key)
                        .anyMatch(s -> s.status() == -1);
            }
        });
        assertThat(sent).as("answers: 200 stored/duplicate, or no answer").allSatisfy(s -> assertThat(
                s.status() == -1 || s.status() == 200 && Set.of("stored", "duplicate").contains(s.answer())).isTrue());

        // the proxy behaves like a load balancer: only requests in flight on the dead instance, or sent to it
        // directly, went unanswered; requests through the proxy soon after the kill all reached a live instance
        URI deadDirect = killed.webhookUri();
        assertThat(sent).as("no answer: only on the killed instance").filteredOn(s -> s.status() == -1)
                .allSatisfy(s -> assertThat(s.target().equals(deadDirect)
                        || s.startNanos() < killedAt + FAILOVER_GRACE.toNanos()).isTrue());
        assertThat(sent).as("through the proxy after the kill")
                .filteredOn(s -> s.target().equals(proxy.webhookUri())
                        && s.startNanos() >= killedAt + FAILOVER_GRACE.toNanos())
                .isNotEmpty().allSatisfy(s -> assertThat(s.status()).isEqualTo(200));

        // every row processed once: never claimed while a live instance's lease held it (the dead one's lease is
        // still running when a survivor takes its rows: its heartbeat stopped), claimed once (twice when the killed
        // instance had it: by the dead one, then by a survivor), processed once
        assertThat(scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
        assertThat(scalar("select count(*) from test_inbox_audit where kind = 'claim' and lease_live"
                + " and (prev_claimed_by <> '" + victim[0] + "' or at < '" + killedDbTime + "'::timestamptz)"))
                .as("claims of a row under a live instance's live lease").isZero();
        assertThat(InboxAudit.rowsProcessedOnce()).as("rows processed exactly once").isEqualTo(stored.size());
        Set<String> claimedAgain = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from"
                + " test_inbox_audit where kind = 'claim' group by 1 having count(*) <> 1");
        Set<String> unexpected = new HashSet<>(claimedAgain);
        unexpected.removeAll(orphans);
        assertThat(claimedAgain).as(() -> "rows claimed more than once; history of some others:"
                + InboxAudit.history(unexpected.stream().limit(5).toList())).isEqualTo(orphans);
        assertThat(scalar("select count(*) from test_inbox_audit c join test_inbox_audit p using (delivery_key)"
                + " where c.kind = 'claim' and c.prev_claimed_by is not null and p.kind = 'processed'"
                + " and p.instance <> '" + victim[0] + "' and c.instance = p.instance"
                + " and c.prev_claimed_by = '" + victim[0] + "' and c.delivery_key in (" + orphanList + ")"))
                .as("orphans taken over from the dead instance by a survivor, which processed them")
                .isEqualTo(orphans.size());
        assertThat(scalar("select count(*) from positions where status = 'open' and ticket = account_id * 100"))
                .isEqualTo(ACCOUNTS);

        // the periodic reconcile: once per period across the three (never two runs within 90 % of a period, never
        // a period without one, the kill included), and after the kill on the survivors
        for (int i = 1; i < runs.size(); i++) {
            Duration gap = Duration.between(runs.get(i - 1).startedAt(), runs.get(i).startedAt());
            assertThat(gap).as("gap between periodic runs %d and %d", i - 1, i)
                    .isGreaterThanOrEqualTo(INTERVAL.multipliedBy(9).dividedBy(10))
                    .isLessThan(INTERVAL.multipliedBy(2).plusSeconds(1));
        }
        assertThat(runs.subList(runsBeforeKill, runs.size())).as("periodic runs after the kill")
                .hasSizeGreaterThanOrEqualTo(2).allSatisfy(r -> assertThat(r.instance()).isNotEqualTo(victim[0]));
    }

    record Run(Instant startedAt, String instance) {
        @Override
        public String toString() {
            return instance + "@" + startedAt;
        }
    }

    private static List<Run> periodicRuns() throws SQLException {
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select r.started_at, a.instance from reconcile_runs r"
                     + " join test_run_audit a using (run_id) where r.trigger = 'periodic' order by r.started_at")) {
            List<Run> runs = new ArrayList<>();
            while (rs.next()) {
                runs.add(new Run(rs.getTimestamp(1).toInstant(), rs.getString(2)));
            }
            return runs;
        }
    }
}
