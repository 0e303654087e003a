package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxAudit;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An instance that dies or stands still while it holds claimed rows, on the shaded jar with the settings a user gets
 * (the 120 s lease included: none of these recoveries may wait for it). Each instance has its own
 * {@code METAKIT_INSTANCE_ID}, its database connections carry that name ({@code application_name}, which
 * {@link InboxAudit} records with every claim and every outcome), and its own address of the MetaKit double, which
 * holds its answers while the test wants the instance's claims in flight. The bound: 10 s.
 */
class InstanceRecoveryFaultIT {
    private static final int ACCOUNTS = 10;
    private static final Duration RECOVERY = Duration.ofSeconds(10);
    private static final Duration PAUSE = Duration.ofSeconds(30);
    /** The liveness bound, metakit.worker.dead-after-millis's default. */
    private static final Duration DEAD_AFTER = Duration.ofSeconds(5);
    private static final Duration STARVED = DEAD_AFTER.multipliedBy(4);
    private static final Pattern RECONCILED = Pattern.compile("Reconciled account (\\d+):");

    @TempDir
    Path workDir;
    private final List<InboxProcess> processes = new ArrayList<>();

    private FakeMetaKit metakit;
    private InboxAudit audit;
    private SignedLoad load;

    @BeforeEach
    void start() {
        metakit = FakeMetaKit.onCleanDatabase(ACCOUNTS);
        audit = InboxAudit.install();
    }

    @AfterEach
    void stop() throws Exception {
        if (load != null) {
            load.stop();
        }
        InboxProcess.closeAll(processes);
        metakit.close();
        audit.close();
    }

    @Test
    void afterAKillNineTheRestartUnderTheSameInstanceIdProcessesEveryAckedRowWithinTenSecondsOfBeingReady()
            throws Exception {
        InboxProcess consumer = instance("inbox-1").start();
        // every reconcile stays in flight: the instance holds the rows it claimed when it is killed
        metakit.hold((client, account) -> true);
        load = new SignedLoad(consumer.webhookUri(), RunningInbox.SECRET, 4, 25, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() ->
                load.count(SignedLoad.Sent::acked) >= 100 && !heldBy("inbox-1").isEmpty());

        consumer.kill();
        Set<String> held = heldBy("inbox-1");
        metakit.release();
        consumer.start();
        long readyAt = System.nanoTime();
        Set<String> storedAtReady = TestDatabase.strings(TestDatabase.dataSource(),
                "select delivery_key from webhook_inbox");
        long recoveryMillis = millisUntilProcessed(storedAtReady, readyAt);

        List<SignedLoad.Sent> sent = load.stop();
        Set<String> acked = SignedLoad.ackedKeys(sent);
        assertThat(storedAtReady).as("every row held by the dead boot").containsAll(held);
        assertEveryAckedRowProcessedByTheHolderOfItsClaim(acked);
        System.out.printf("FAULT recovery kill-9 restart: acked=%d, %d rows held by the killed boot, all %d rows"
                        + " stored at ready processed %d ms after the restarted instance was ready%n",
                acked.size(), held.size(), storedAtReady.size(), recoveryMillis);
    }

    @Test
    void afterAKillNineOfOneOfTwoInstancesTheSurvivorProcessesTheRowsTheDeadOneHadClaimedWithinTenSeconds()
            throws Exception {
        InboxProcess victim = instance("inbox-a");
        InboxProcess survivor = instance("inbox-b");
        startAll();
        metakit.hold((client, account) -> true);
        // deliveries reach the survivor; the victim claims from the shared inbox on its poll
        load = new SignedLoad(survivor.webhookUri(), RunningInbox.SECRET, 4, 25, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> !heldBy("inbox-a").isEmpty());

        victim.kill();
        long killedAt = System.nanoTime();
        Set<String> orphans = heldBy("inbox-a");
        metakit.release();
        long takeoverMillis = millisUntilProcessed(orphans, killedAt);

        Set<String> acked = SignedLoad.ackedKeys(load.stop());
        assertThat(orphans).isNotEmpty();
        assertThat(processedBy(orphans)).as("who processed the dead instance's rows").containsOnlyKeys("inbox-b");
        assertEveryAckedRowProcessedByTheHolderOfItsClaim(acked);
        System.out.printf("FAULT recovery kill-9 one of two: %d rows held by the killed instance, processed by the"
                + " survivor %d ms after the kill%n", orphans.size(), takeoverMillis);
    }

    @Test
    void aPausedInstancesRowsAreTakenOverWithinTenSecondsAndOnResumingItWritesNothingForThem() throws Exception {
        InboxProcess paused = twoInstancesTheFirstHoldingClaims();

        paused.pause();
        long pausedAt = System.nanoTime();
        Set<String> orphans = heldBy("inbox-a");
        long contested = accountsOf(orphans).first();
        Set<String> contestedRows = rowsOf(orphans, contested);
        Set<String> freedRows = new HashSet<>(orphans);
        freedRows.removeAll(contestedRows);
        // The paused instance's calls are answered now (the answers wait in its sockets). The survivor's are too,
        // except those for one account once it has taken that account's rows over: they stay in flight until after
        // the resume, so those rows are the survivor's, unprocessed, when the paused instance wakes up with its old
        // work for them in hand.
        metakit.hold((client, account) -> client.equals("inbox-b") && account == contested
                && claimedBy("inbox-b", contestedRows).equals(contestedRows));

        long freedMillis = millisUntilProcessed(freedRows, pausedAt);
        await().atMost(RECOVERY.minusNanos(System.nanoTime() - pausedAt)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(claimedBy("inbox-b", contestedRows))
                        .as("rows of account %d claimed by the survivor", contested).isEqualTo(contestedRows));
        long contestedMillis = Duration.ofNanos(System.nanoTime() - pausedAt).toMillis();

        FaultWindow.holdUntil(pausedAt + PAUSE.toNanos(), "no write without the claim while one instance is paused",
                () -> InboxAudit.writesWithoutTheClaim().isEmpty());
        long logMark = Files.size(paused.log());
        paused.resume();
        // its old work runs to its end (the answers were waiting), then whatever it would write for those rows
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(reconciledSince(paused, logMark))
                .as("accounts the resumed instance reconciled").containsAll(accountsOf(orphans)));
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4))
                .untilAsserted(() -> assertThat(InboxAudit.writesWithoutTheClaim()).isEmpty());
        metakit.release();

        Set<String> acked = SignedLoad.ackedKeys(load.stop());
        assertThat(freedRows).as("rows of other accounts the paused instance held").isNotEmpty();
        assertThat(processedBy(orphans)).as("who processed the paused instance's rows").containsOnlyKeys("inbox-b");
        assertEveryAckedRowProcessedByTheHolderOfItsClaim(acked);
        System.out.printf("FAULT recovery SIGSTOP one of two for %d s: %d rows held by the paused instance; %d"
                        + " processed by the survivor %d ms after the pause; the other %d (account %d) claimed by it"
                        + " %d ms after the pause; no write by the resumed instance for any of them%n",
                PAUSE.toSeconds(), orphans.size(), freedRows.size(), freedMillis, contestedRows.size(), contested,
                contestedMillis);
    }

    /**
     * Starved, not frozen: for four times dead-after the instance runs 100 ms in every 400 (SIGSTOP 300 ms, SIGCONT
     * 100 ms), a quarter of the time, as on a host with more work than cores or in a throttled container, while it
     * holds claims (its reconciles held by the MetaKit double until its API timeout). Its heartbeat stays younger than
     * dead-after on the database's clock all along, so the survivor takes none of its rows over, and it says nothing
     * of a takeover.
     */
    @Test
    void aStarvedInstanceStaysAliveKeepsItsClaimsAndSaysNothingOfATakeover() throws Exception {
        InboxProcess starved = twoInstancesTheFirstHoldingClaims();

        double[] oldestBeat = {0};
        try (AutoCloseable starving = starved.starve(Duration.ofMillis(300), Duration.ofMillis(100))) {
            FaultWindow.holdFor(STARVED, "the starved instance's heartbeat younger than dead-after (5 s), none of its"
                    + " claims taken over", () -> {
                double age = heartbeatAgeSeconds("inbox-a");
                oldestBeat[0] = Math.max(oldestBeat[0], age);
                return age < DEAD_AFTER.toMillis() / 1000.0 && claimsTakenOver("inbox-a", "inbox-b") == 0;
            });
        }
        metakit.release();

        Set<String> acked = SignedLoad.ackedKeys(load.stop());
        long takenOver = claimsTakenOver("inbox-a", "inbox-b");
        System.out.printf("FAULT recovery starved (SIGSTOP 300 ms / SIGCONT 100 ms for %d s): oldest heartbeat seen"
                + " %.1f s; rows taken over from it %d%n", STARVED.toSeconds(), oldestBeat[0], takenOver);
        assertThat(takenOver).as("rows claimed by the survivor while the starved instance's claim was on them")
                .isZero();
        assertEveryAckedRowProcessedByTheHolderOfItsClaim(acked);
        assertThat(Files.readAllLines(starved.log())).as("the starved instance's log")
                .noneMatch(line -> line.contains("took them over") || line.contains("heartbeat failed"));
    }

    /**
     * How many rows {@code by} claimed while {@code from}'s claim was on them: a takeover (the rows {@code from} gave
     * back, processed or failed carry no claim any more).
     */
    private static long claimsTakenOver(String from, String by) {
        return TestDatabase.scalar("select count(*) from test_inbox_audit where kind = 'claim' and instance = '" + by
                + "' and prev_claimed_by = '" + from + "'");
    }

    /**
     * Two instances, {@code inbox-a} and {@code inbox-b}, the deliveries sent to {@code inbox-b}; returns {@code inbox-a}
     * once it holds claimed rows of at least two accounts (the MetaKit double holds its reconciles: it holds what it
     * claims).
     */
    private InboxProcess twoInstancesTheFirstHoldingClaims() {
        InboxProcess first = instance("inbox-a");
        InboxProcess survivor = instance("inbox-b");
        startAll();
        metakit.hold((client, account) -> client.equals("inbox-a"));
        load = new SignedLoad(survivor.webhookUri(), RunningInbox.SECRET, 4, 25, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> accountsOf(heldBy("inbox-a")).size() >= 2);
        return first;
    }

    /** How long ago, on the database's clock, the boot of this instance id last beat. */
    private static double heartbeatAgeSeconds(String instance) {
        return Double.parseDouble(TestDatabase.text("select extract(epoch from now() - max(heartbeat_at))::text"
                + " from inbox_instances where instance_id = '" + instance + "'"));
    }

    /** An instance as an operator runs it: the defaults, its own instance id; its connections named after it. */
    private InboxProcess instance(String id) {
        InboxProcess p = new InboxProcess(workDir, metakit.urlFor(id), Map.of(
                "METAKIT_INSTANCE_ID", id,
                "DATABASE_URL", TestDatabase.jdbcUrl(id)));
        processes.add(p);
        return p;
    }

    private void startAll() {
        InboxProcess.startAll(processes);
    }

    /** Waits, at most {@link #RECOVERY} from {@code fromNanos}, until these rows are processed; how long it took. */
    private static long millisUntilProcessed(Collection<String> keys, long fromNanos) {
        await().atMost(RECOVERY.minusNanos(System.nanoTime() - fromNanos)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(unprocessed(keys).size()).as("of %d rows, unprocessed", keys.size())
                        .isZero());
        return Duration.ofNanos(System.nanoTime() - fromNanos).toMillis();
    }

    /**
     * Nothing acked is lost, the backlog drains, nothing failed, and every renewal and outcome in the inbox was
     * written by the instance that held the row's claim at that moment.
     */
    private static void assertEveryAckedRowProcessedByTheHolderOfItsClaim(Set<String> acked) {
        Set<String> stored = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox");
        assertThat(stored).as("acked rows stored").containsAll(acked);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(unprocessed(stored).size()).as("of %d rows, unprocessed",
                        stored.size()).isZero());
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where failed_at is not null")).isZero();
        assertThat(InboxAudit.writesWithoutTheClaim()).as("writes by an instance not holding the row's claim")
                .isEmpty();
    }

    /** The rows pending under a claim this instance made (still the row's current claim). */
    private static Set<String> heldBy(String instance) throws SQLException {
        return keys("""
                select w.delivery_key from webhook_inbox w
                 where w.processed_at is null and w.failed_at is null
                   and exists (select 1 from test_inbox_audit c
                                where c.kind = 'claim' and c.instance = ? and c.delivery_key = w.delivery_key
                                  and c.claim = coalesce(to_jsonb(w)->>'claim_token', w.claimed_by))""", instance);
    }

    private static Set<String> unprocessed(Collection<String> keys) throws SQLException {
        return keys("select delivery_key from webhook_inbox where processed_at is null and delivery_key = any(?)",
                keys);
    }

    private static Set<String> claimedBy(String instance, Collection<String> keys) {
        return uncheckedKeys("select distinct delivery_key from test_inbox_audit where kind = 'claim' and instance = ?"
                + " and delivery_key = any(?)", instance, keys);
    }

    private static Set<String> rowsOf(Collection<String> keys, long account) throws SQLException {
        return keys("select delivery_key from webhook_inbox where account_id = ? and delivery_key = any(?)",
                account, keys);
    }

    private static TreeSet<Long> accountsOf(Collection<String> keys) throws SQLException {
        TreeSet<Long> accounts = new TreeSet<>();
        keys("select distinct account_id::text from webhook_inbox where delivery_key = any(?)", keys)
                .forEach(a -> accounts.add(Long.parseLong(a)));
        return accounts;
    }

    /** Which instances marked these rows processed, with how many each. */
    private static Map<String, Long> processedBy(Collection<String> keys) throws SQLException {
        Map<String, Long> by = new java.util.TreeMap<>();
        keys("select instance || '=' || count(*) from test_inbox_audit where kind = 'processed'"
                + " and delivery_key = any(?) group by instance", keys)
                .forEach(s -> by.put(s.substring(0, s.indexOf('=')), Long.parseLong(s.substring(s.indexOf('=') + 1))));
        return by;
    }

    /** The accounts an instance's log says it reconciled after {@code mark} (a length of its log file). */
    private static Set<Long> reconciledSince(InboxProcess p, long mark) throws IOException {
        String log = Files.readString(p.log());
        Set<Long> accounts = new TreeSet<>();
        RECONCILED.matcher(log.substring((int) Math.min(mark, log.length()))).results()
                .forEach(m -> accounts.add(Long.parseLong(m.group(1))));
        return accounts;
    }

    private static Set<String> uncheckedKeys(String sql, Object... params) {
        try {
            return keys(sql, params);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Set<String> keys(String sql, Object... params) throws SQLException {
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                if (params[i] instanceof Collection<?> values) {
                    ps.setArray(i + 1, c.createArrayOf("text", values.toArray()));
                } else {
                    ps.setObject(i + 1, params[i]);
                }
            }
            Set<String> out = new HashSet<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
            return out;
        }
    }
}
