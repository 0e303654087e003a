package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.FeedPair;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RecordingFeedOutlet;
import dev.metakit.inbox.support.RecordingFeedOutlet.Receipt;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A frozen instance must not hold the feed hostage. Two instances of the shaded jar on one PostgreSQL, every
 * setting at its default, the feed on with its outlet pointed at the test's HTTP endpoint (the one line an integrator
 * edits in {@code changes.camel.yaml}: one POST per change, each instance its own path, so every arrival says who sent
 * it; the receiver answers at once). The MetaKit double's positions change all the time (two positions per account,
 * their stop losses moved 25 times a second) and signed {@code position.modified} deliveries go to both instances,
 * each instance alone getting 25 a second per account, so every account has new changes throughout, at 15 or more a
 * second each when the machine keeps up (the run prints the rate it reached). The instance that publishes more accounts is stopped with
 * SIGSTOP for 30 s while it publishes them, then resumed.
 *
 * <p>What must hold, as the downstream feels it: no change of any account waits longer than {@link #MAX_LAG} from
 * written (its {@code reconciled_at}) to accepted by the receiver, during the freeze (checked as it goes) nor after it
 * (the backlog caught up); per account the changes' first arrivals are seq 1, 2, 3, ... without a gap or a swap across
 * the hand-over (a repeat carries an id already received); after the resume the woken instance sends nothing for the
 * accounts it lost but what it had under way when it froze (at most one change per publishing thread, each a repeat),
 * and never takes them back while their new owner beats.
 */
class FrozenPublisherFaultIT {
    private static final int ACCOUNTS = 4;
    /** signed deliveries per instance: threads, each at this rate, round robin over the accounts */
    private static final int LOAD_THREADS = 4;
    private static final int LOAD_RATE_PER_THREAD = 25;
    private static final Duration PAUSE = Duration.ofSeconds(30);
    /**
     * From a change written to the receiver accepting it: the worker's dead-after (5 s, the liveness bound: the frozen
     * owner's accounts are the survivor's from then on), one publishing round of the survivor, and the backlog of the
     * frozen accounts drained faster than changes arrive, with room for a loaded machine
     */
    private static final Duration MAX_LAG = Duration.ofSeconds(10);
    /**
     * The longest an account's feed may go without a new change during the freeze: the bound above (a reconcile of the
     * account commits its next change once the survivor holds its rows: a frozen process's locks on them end before
     * dead-after, InboxDatabase's idle-in-transaction timeout)
     */
    private static final Duration MAX_SILENCE = Duration.ofSeconds(10);
    /** application.properties: metakit.feed.concurrency (threads that may each have a send under way) */
    private static final int FEED_THREADS = 4;

    @TempDir
    Path workDir;

    private FeedPair pair;

    @AfterEach
    void stop() throws Exception {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void aFrozenPublishersAccountsAreTakenOverWithinTheLivenessBoundInOrderAndOnWakingItSendsNothingItLost()
            throws Exception {
        pair = new FeedPair(workDir, ACCOUNTS).start(LOAD_THREADS, LOAD_RATE_PER_THREAD);
        RecordingFeedOutlet outlet = pair.outlet();

        // the victim: the instance owning more accounts, once it is sending changes of at least two of them (frozen at
        // once: the accounts it sent in the last second are those it was sending at the freeze)
        String[] pick = new String[1];
        Set<Long> publishing = new TreeSet<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            Map<String, Set<Long>> owned = FeedPair.ownedAccounts();
            String a = FeedPair.IDS.get(0);
            String more = owned.getOrDefault(a, Set.of()).size()
                    >= owned.getOrDefault(FeedPair.other(a), Set.of()).size() ? a : FeedPair.other(a);
            pick[0] = more;
            publishing.clear();
            publishing.addAll(pair.sentRecently(more, owned.getOrDefault(more, Set.of()), Duration.ofSeconds(1)));
            return publishing.size() >= 2;
        });
        String victimId = pick[0];
        String survivorId = FeedPair.other(victimId);
        InboxProcess victim = pair.process(victimId);

        victim.pause();
        long pausedAt = System.nanoTime();
        Instant pausedAtWall = Instant.now();
        Set<Long> held = FeedPair.ownedAccounts().getOrDefault(victimId, Set.of());

        FaultWindow.holdUntil(pausedAt + PAUSE.toNanos(), "no change waits longer than " + MAX_LAG.toMillis()
                + " ms from written to accepted downstream during the freeze",
                () -> pair.waitingLongerThan(MAX_LAG).isEmpty());
        Map<Long, Long> silenceMillis = longestSilencePerAccount(outlet, pausedAt, pausedAt + PAUSE.toNanos());
        assertThat(silenceMillis).as("per account, the longest time without a new change at the outlet during the"
                + " freeze (ms)").allSatisfy((account, ms) -> assertThat(ms).isLessThanOrEqualTo(MAX_SILENCE.toMillis()));
        Map<Long, Set<String>> ownersAtResume = ownersOf(held);

        long logMark = Files.size(victim.log());
        victim.resume();
        long resumedAt = System.nanoTime();
        // traffic goes on after the resume: every account keeps changing and publishing
        long resumedCount = outlet.receipts().size();
        await().atMost(Duration.ofSeconds(30)).until(() -> outlet.receipts().size() > resumedCount + 20 * ACCOUNTS);
        pair.stopTraffic();
        Instant trafficEnded = Instant.now();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() ->
                TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is null") == 0
                        && TestDatabase.scalar("select count(*) from position_changes where published_at is null") == 0);

        List<Receipt> receipts = outlet.receipts();
        // as the downstream felt it: from written to accepted, every change from just before the freeze on
        FeedPair.Lags lags = pair.lags(pausedAtWall.minusSeconds(2), trafficEnded.plusSeconds(60));
        assertThat(lags.missing()).as("changes written and never at the receiver").isEmpty();
        assertThat(lags.longest()).as("per account, the longest time from a change written (reconciled_at) to the"
                + " receiver accepting it, from 2 s before the freeze to the end (ms)").hasSize(ACCOUNTS)
                .allSatisfy((account, ms) -> assertThat(ms).isLessThanOrEqualTo(MAX_LAG.toMillis()));
        // order per account: the first arrivals are seq 1, 2, 3, ... up to the last committed one, nothing missing
        Map<Long, Long> lastSeq = lastSeqPerAccount();
        for (long account = 1; account <= ACCOUNTS; account++) {
            long acc = account;
            List<Long> firstArrivals = outlet.firstArrivals().values().stream().filter(r -> r.account() == acc)
                    .map(Receipt::seq).toList();
            assertThat(firstArrivals).as("account %d: first arrivals in seq order, no gap", account)
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, lastSeq.get(account)).boxed().toList());
        }
        // after the resume: for the accounts it lost, only what it had under way, each a repeat
        Set<String> receivedBeforeResume = new HashSet<>();
        receipts.stream().filter(r -> r.nanos() < resumedAt).forEach(r -> receivedBeforeResume.add(r.id()));
        List<Receipt> lateFromVictim = receipts.stream().filter(r -> r.nanos() >= resumedAt
                && r.instance().equals(victimId) && held.contains(r.account())).toList();
        assertThat(ownersAtResume.values()).as("owners of the victim's accounts at the resume")
                .allSatisfy(owners -> assertThat(owners).containsExactly(survivorId));
        assertThat(lateFromVictim).as("sends of the woken instance for accounts it lost")
                .hasSizeLessThanOrEqualTo(FEED_THREADS)
                .allSatisfy(r -> assertThat(receivedBeforeResume).as("a repeat").contains(r.id()));
        assertThat(lateFromVictim.stream().map(Receipt::account).distinct().count())
                .as("at most one change under way per account").isEqualTo(lateFromVictim.size());
        assertThat(ownersOf(held).values()).as("not taken back while the survivor beats")
                .allSatisfy(owners -> assertThat(owners).containsExactly(survivorId));
        String wokenLog = Files.readString(victim.log()).substring((int) logMark);

        System.out.printf(Locale.ROOT, "FAULT feed SIGSTOP one of two for %d s: the frozen instance owned accounts %s"
                        + " (sending %s at the freeze); per account, longest written -> accepted downstream from 2 s"
                        + " before the freeze on: %s ms; changes written per second during the freeze: %s; %d changes"
                        + " over %d accounts; after the resume it sent %d change(s) of accounts it lost (repeats under"
                        + " way at the freeze); its log: %d \"no longer this instance's\" and %d \"taken over"
                        + " meanwhile\" lines; longest silence of an account's feed during the freeze: %s ms%n",
                PAUSE.toSeconds(), held, publishing, lags.longest(),
                pair.lags(pausedAtWall, pausedAtWall.plus(PAUSE)).perSecond(PAUSE), outlet.firstArrivals().size(),
                ACCOUNTS, lateFromVictim.size(), count(wokenLog, "no longer this instance's"),
                count(wokenLog, "taken over meanwhile"), silenceMillis);
    }

    /**
     * Per account, the longest time between {@code from} and {@code to} without a change arriving at the outlet for
     * the first time (counting from {@code from} to the first arrival and from the last one to {@code to}).
     */
    private static Map<Long, Long> longestSilencePerAccount(RecordingFeedOutlet outlet, long from, long to) {
        Map<Long, List<Long>> arrivals = new TreeMap<>();
        LongStream.rangeClosed(1, ACCOUNTS).forEach(a -> arrivals.put(a, new ArrayList<>()));
        outlet.firstArrivals().values().stream().filter(r -> r.nanos() >= from && r.nanos() <= to)
                .forEach(r -> arrivals.get(r.account()).add(r.nanos()));
        Map<Long, Long> longest = new TreeMap<>();
        arrivals.forEach((account, times) -> {
            long previous = from;
            long gap = 0;
            for (long t : times) {
                gap = Math.max(gap, t - previous);
                previous = t;
            }
            gap = Math.max(gap, to - previous);
            longest.put(account, Duration.ofNanos(gap).toMillis());
        });
        return longest;
    }

    private static Map<Long, Set<String>> ownersOf(Set<Long> accounts) throws Exception {
        Map<Long, Set<String>> out = new TreeMap<>();
        FeedPair.ownedAccounts().forEach((instance, owned) -> owned.stream().filter(accounts::contains)
                .forEach(a -> out.computeIfAbsent(a, k -> new TreeSet<>()).add(instance)));
        assertThat(out.keySet()).as("every one of them owned").isEqualTo(accounts);
        return out;
    }

    private static Map<Long, Long> lastSeqPerAccount() throws Exception {
        Map<Long, Long> out = new TreeMap<>();
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "select account_id, max(seq) from position_changes group by account_id"); ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                out.put(rs.getLong(1), rs.getLong(2));
            }
        }
        assertThat(out).as("every account has changes").hasSize(ACCOUNTS);
        return out;
    }

    private static long count(String text, String needle) {
        return text.isEmpty() ? 0 : (text.length() - text.replace(needle, "").length()) / needle.length();
    }
}
