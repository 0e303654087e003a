package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RecordingFeedOutlet;
import dev.metakit.inbox.support.RecordingFeedOutlet.Receipt;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A frozen instance must not hold the feed hostage. Two instances of the shaded jar on one PostgreSQL, every
 * setting at its default, the feed on with its outlet pointed at the test's HTTP endpoint (the one line an integrator
 * edits in {@code changes.camel.yaml}: each instance its own path, so every arrival says who sent it). The MetaKit
 * double's positions change all the time (a stop loss moved every 100 ms per account) and signed
 * {@code position.modified} deliveries go to both instances, so every account has new changes throughout. The
 * instance that publishes more accounts is stopped with SIGSTOP for 30 s while it publishes them, then resumed.
 *
 * <p>What must hold: during the freeze no committed change of any account waits at the outlet longer than the worker's
 * dead-after (5 s, the liveness bound) plus {@link #MARGIN}; per account the changes' first arrivals are seq 1, 2, 3,
 * ... without a gap or a swap across the hand-over (a repeat carries an id already received); after the resume the woken
 * instance sends nothing for the accounts it lost but what it had under way when it froze (at most one change per
 * publishing thread, each a repeat), and never takes them back while their new owner beats.
 */
class FrozenPublisherFaultIT {
    private static final int ACCOUNTS = 10;
    private static final Duration PAUSE = Duration.ofSeconds(30);
    /** application.properties: metakit.worker.dead-after-millis */
    private static final Duration DEAD_AFTER = Duration.ofSeconds(5);
    /**
     * the survivor's next feed poll (250 ms), then its statements and sends: its own accounts' changes waited up to
     * 2.1 s at the outlet on the 2-core machine at load 28
     */
    private static final Duration MARGIN = Duration.ofSeconds(3);
    /**
     * The longest an account's feed may go without a new change during the freeze: the bound above, plus the time a
     * reconcile of the account takes to commit its next change once the survivor holds its rows (a frozen process's
     * locks on them end before dead-after: InboxDatabase's idle-in-transaction timeout)
     */
    private static final Duration MAX_SILENCE = Duration.ofSeconds(10);
    /** application.properties: metakit.feed.concurrency (threads that may each have a send under way) */
    private static final int FEED_THREADS = 4;
    private static final String OUTLET_LINE =
            "uri: \"log:dev.metakit.inbox.feed.outlet?exchangeFormatter=#bean:changeLine\"";

    @TempDir
    Path workDir;

    private FakeMetaKit metakit;
    private RecordingFeedOutlet outlet;
    private final List<InboxProcess> processes = new ArrayList<>();
    private final List<SignedLoad> loads = new ArrayList<>();
    /** change id -> when this test first saw it committed (System.nanoTime) */
    private final Map<String, Long> committedAt = new ConcurrentHashMap<>();
    private volatile boolean running = true;
    private final List<Thread> threads = new ArrayList<>();

    @BeforeEach
    void start() {
        metakit = FakeMetaKit.onCleanDatabase(ACCOUNTS);
        outlet = new RecordingFeedOutlet();
    }

    @AfterEach
    void stop() throws Exception {
        running = false;
        for (Thread t : threads) {
            t.join(5_000);
        }
        for (SignedLoad load : loads) {
            load.stop();
        }
        // SIGKILL ends a process left stopped by a failure during the freeze as well
        InboxProcess.closeAll(processes);
        outlet.close();
        metakit.close();
    }

    @Test
    void aFrozenPublishersAccountsAreTakenOverWithinTheLivenessBoundInOrderAndOnWakingItSendsNothingItLost()
            throws Exception {
        InboxProcess a = instance("inbox-a");
        InboxProcess b = instance("inbox-b");
        InboxProcess.startAll(processes);
        background("market", this::moveStopLosses);
        background("committed-changes", this::watchCommittedChanges);
        for (InboxProcess p : processes) {
            loads.add(new SignedLoad(p.webhookUri(), RunningInbox.SECRET, 2, 10, ACCOUNTS).start());
        }

        // the victim: the instance owning more accounts, once it is sending changes of at least two of them
        String[] pick = new String[2];
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            Map<String, Set<Long>> owned = ownedAccounts();
            String more = owned.getOrDefault("inbox-a", Set.of()).size()
                    >= owned.getOrDefault("inbox-b", Set.of()).size() ? "inbox-a" : "inbox-b";
            pick[0] = more;
            pick[1] = more.equals("inbox-a") ? "inbox-b" : "inbox-a";
            return sentRecently(more, owned.getOrDefault(more, Set.of()), Duration.ofSeconds(1)).size() >= 2;
        });
        String victimId = pick[0];
        String survivorId = pick[1];
        InboxProcess victim = victimId.equals("inbox-a") ? a : b;

        victim.pause();
        long pausedAt = System.nanoTime();
        Set<Long> held = ownedAccounts().getOrDefault(victimId, Set.of());
        Set<Long> publishing = sentRecently(victimId, held, Duration.ofSeconds(1));
        assertThat(publishing).as("accounts the victim owned and was sending at the freeze").hasSizeGreaterThan(1);

        Duration bound = DEAD_AFTER.plus(MARGIN);
        FaultWindow.holdUntil(pausedAt + PAUSE.toNanos(), "no committed change waits at the outlet longer than "
                + bound.toMillis() + " ms during the freeze", () -> waitingLongerThan(bound).isEmpty());
        Map<Long, Long> stallMillis = longestWaitPerAccount(pausedAt, System.nanoTime());
        Map<Long, Long> silenceMillis = longestSilencePerAccount(pausedAt, pausedAt + PAUSE.toNanos());
        assertThat(silenceMillis).as("per account, the longest time without a new change at the outlet during the"
                + " freeze (ms)").allSatisfy((account, ms) -> assertThat(ms).isLessThanOrEqualTo(MAX_SILENCE.toMillis()));
        Map<Long, Set<String>> ownersAtResume = ownersOf(held);

        long logMark = Files.size(victim.log());
        victim.resume();
        long resumedAt = System.nanoTime();
        // traffic goes on after the resume: every account keeps changing and publishing
        long resumedCount = outlet.receipts().size();
        await().atMost(Duration.ofSeconds(30)).until(() -> outlet.receipts().size() > resumedCount + 20 * ACCOUNTS);
        running = false;
        for (Thread t : threads) {
            t.join(5_000);
        }
        for (SignedLoad load : loads) {
            load.stop();
        }
        loads.clear();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() ->
                TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is null") == 0
                        && TestDatabase.scalar("select count(*) from position_changes where published_at is null") == 0);

        List<Receipt> receipts = outlet.receipts();
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

        Map<Boolean, List<Long>> stalls = new TreeMap<>();
        stallMillis.forEach((account, ms) -> stalls.computeIfAbsent(held.contains(account), k -> new ArrayList<>())
                .add(ms));
        System.out.printf(Locale.ROOT, "FAULT feed SIGSTOP one of two for %d s: the frozen instance owned accounts %s"
                        + " (sending %s at the freeze); longest wait of a committed change at the outlet during the"
                        + " freeze, its accounts: %s ms, the survivor's: %s ms; %d changes over %d accounts; after the"
                        + " resume it sent %d change(s) of accounts it lost (repeats under way at the freeze); its log:"
                        + " %d \"no longer this instance's\" and %d \"taken over meanwhile\" lines; accounts with no change"
                        + " committed from 2 s before the freeze to its end: %s; longest silence of an account's feed"
                        + " during the freeze: %s ms%n",
                PAUSE.toSeconds(), held, publishing, stalls.getOrDefault(true, List.of()),
                stalls.getOrDefault(false, List.of()), outlet.firstArrivals().size(), ACCOUNTS, lateFromVictim.size(),
                count(wokenLog, "no longer this instance's"), count(wokenLog, "taken over meanwhile"),
                LongStream.rangeClosed(1, ACCOUNTS).filter(acc -> !stallMillis.containsKey(acc)).boxed().toList(),
                silenceMillis);
    }

    /**
     * Per account, the longest time between {@code from} and {@code to} without a change arriving at the outlet for
     * the first time (counting from {@code from} to the first arrival and from the last one to {@code to}).
     */
    private Map<Long, Long> longestSilencePerAccount(long from, long to) {
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

    /** An instance as an operator runs it, the feed's outlet pointed at the test's endpoint (its own path). */
    private InboxProcess instance(String id) throws Exception {
        Path routes = Files.createDirectories(workDir.resolve("routes-" + id));
        try (Stream<Path> files = Files.list(RunningInbox.basedir().resolve("routes"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".camel.yaml")).toList()) {
                String text = Files.readString(f);
                if (f.getFileName().toString().equals("changes.camel.yaml")) {
                    assertThat(text).contains(OUTLET_LINE);
                    text = text.replace(OUTLET_LINE, "uri: \"" + outlet.url(id) + "\"");
                }
                Files.writeString(routes.resolve(f.getFileName()), text);
            }
        }
        InboxProcess p = new InboxProcess(Files.createDirectories(workDir.resolve(id)), metakit.urlFor(id), Map.of(
                "METAKIT_INSTANCE_ID", id,
                "DATABASE_URL", TestDatabase.jdbcUrl(id),
                "CAMEL_MAIN_ROUTESINCLUDEPATTERN", "file:" + routes + "/*.camel.yaml"));
        processes.add(p);
        return p;
    }

    private void background(String name, Runnable loop) {
        Thread t = new Thread(loop, "frozen-publisher-" + name);
        t.setDaemon(true);
        t.start();
        threads.add(t);
    }

    /** The market: each account's stop loss moves every 100 ms, so each reconcile of it finds a change. */
    private void moveStopLosses() {
        Instant opened = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);
        long n = 0;
        while (running) {
            n++;
            long account = 1 + n % ACCOUNTS;
            metakit.open(account, account * 100, "0.10", String.format(Locale.ROOT, "1.%05d", n % 100_000), "0",
                    opened);
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos()); // pacing, not a wait for a condition
        }
    }

    /** Notes when each change is first seen committed (polled every 50 ms: a wait measured from it is at most 50 ms short). */
    private void watchCommittedChanges() {
        long after = 0;
        while (running) {
            try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                    "select change_id, account_id || ':' || seq from position_changes where change_id > ?"
                            + " order by change_id")) {
                s.setLong(1, after);
                try (ResultSet rs = s.executeQuery()) {
                    long seen = System.nanoTime();
                    while (rs.next()) {
                        after = Math.max(after, rs.getLong(1));
                        committedAt.putIfAbsent(rs.getString(2), seen);
                    }
                }
            } catch (Exception e) {
                // the next poll tries again
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
    }

    /** Committed changes not at the outlet although committed longer than {@code bound} ago. */
    private Set<String> waitingLongerThan(Duration bound) {
        Set<String> arrived = outlet.firstArrivals().keySet();
        long now = System.nanoTime();
        Set<String> late = new TreeSet<>();
        committedAt.forEach((id, at) -> {
            if (now - at > bound.toNanos() && !arrived.contains(id)) {
                late.add(id);
            }
        });
        return late;
    }

    /** Per account, the longest a change committed in [from - 2 s, to] waited for its first arrival (or until to). */
    private Map<Long, Long> longestWaitPerAccount(long from, long to) {
        Map<String, Receipt> first = outlet.firstArrivals();
        Map<Long, Long> longest = new TreeMap<>();
        committedAt.forEach((id, at) -> {
            if (at < from - Duration.ofSeconds(2).toNanos() || at > to) {
                return;
            }
            Receipt r = first.get(id);
            long waited = (r == null ? to : Math.min(r.nanos(), to)) - at;
            longest.merge(Long.parseLong(id.substring(0, id.indexOf(':'))), Duration.ofNanos(waited).toMillis(),
                    Math::max);
        });
        return longest;
    }

    /** Of an instance's accounts, those it sent a change of within the last {@code within}. */
    private Set<Long> sentRecently(String instance, Set<Long> accounts, Duration within) {
        long since = System.nanoTime() - within.toNanos();
        Set<Long> out = new TreeSet<>();
        outlet.receipts().stream().filter(r -> r.instance().equals(instance) && r.nanos() > since
                && accounts.contains(r.account())).forEach(r -> out.add(r.account()));
        return out;
    }

    /** feed_owners: instance -> accounts it owns. */
    private static Map<String, Set<Long>> ownedAccounts() throws Exception {
        Map<String, Set<Long>> out = new HashMap<>();
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "select owner_instance, account_id from feed_owners"); ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                out.computeIfAbsent(rs.getString(1), k -> new TreeSet<>()).add(rs.getLong(2));
            }
        }
        return out;
    }

    private static Map<Long, Set<String>> ownersOf(Set<Long> accounts) throws Exception {
        Map<Long, Set<String>> out = new TreeMap<>();
        ownedAccounts().forEach((instance, owned) -> owned.stream().filter(accounts::contains)
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
