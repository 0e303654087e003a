package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.InboxAudit;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One of two instances stopped ({@code SIGSTOP} for 30 s) or starved (a quarter of the time) while it holds claimed
 * rows (docs/faults.md).
 */
class StalledInstanceFaultIT extends InstanceFaults {
    private static final Duration PAUSE = Duration.ofSeconds(30);
    /** The liveness bound, metakit.worker.dead-after-millis's default. */
    private static final Duration DEAD_AFTER = Duration.ofSeconds(5);
    private static final Duration STARVED = DEAD_AFTER.multipliedBy(4);
    private static final Pattern RECONCILED = Pattern.compile("Reconciled account (\\d+):");

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
                .untilAsserted(() -> {
                    assertThat(InboxAudit.writesWithoutTheClaim()).isEmpty();
                    assertThat(InboxAudit.settledWithoutACatchUp()).isEmpty();
                });
        metakit.release();

        Set<String> acked = SignedLoad.ackedKeys(load.stop());
        assertThat(freedRows).as("rows of other accounts the paused instance held").isNotEmpty();
        // a row the survivor tried and gave back (its reconcile timed out on the held account) is pending again, for
        // any instance's next claim: the account's retry takes one row at a time, so the resumed instance may claim
        // the others, under a claim of its own (checked below: every row processed by the holder of its claim)
        Set<String> givenBack = uncheckedKeys("select distinct delivery_key from test_inbox_audit where kind = 'retry'"
                + " and instance = 'inbox-b' and delivery_key = any(?)", orphans);
        Set<String> keptBySurvivor = new HashSet<>(orphans);
        keptBySurvivor.removeAll(givenBack);
        assertThat(keptBySurvivor).as("the paused instance's rows the survivor never gave back").isNotEmpty();
        assertThat(processedBy(keptBySurvivor)).as("who processed the paused instance's rows")
                .containsOnlyKeys("inbox-b");
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

    private static Set<String> claimedBy(String instance, Collection<String> keys) {
        return uncheckedKeys("select distinct delivery_key from test_inbox_audit where kind = 'claim' and instance = ?"
                + " and delivery_key = any(?)", instance, keys);
    }

    private static Set<String> rowsOf(Collection<String> keys, long account) throws SQLException {
        return keys("select delivery_key from webhook_inbox where account_id = ? and delivery_key = any(?)",
                account, keys);
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
}
