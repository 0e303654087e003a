package dev.metakit.inbox.support;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * Two instances of the shaded jar on one PostgreSQL, every setting at its default, the feed's outlet edited as an
 * integrator would (the one line of {@code changes.camel.yaml}) to an HTTP receiver that answers at once
 * ({@link RecordingFeedOutlet}: one POST per change, each instance its own path, so every arrival says who sent it);
 * the MetaKit double's stop losses moving all the time ({@link #MOVING_POSITIONS} positions per account) and signed
 * {@code position.modified} deliveries going to both instances, so every account has new changes throughout. What the frozen-publisher fault test and the feed's takeover
 * benchmark run, and what they measure: per account, the time from a change written (its {@code reconciled_at}, on the
 * database's clock) to the receiver accepting it (on the wall clock: one machine, one clock).
 */
public final class FeedPair implements AutoCloseable {
    /** The outlet line of the shipped {@code changes.camel.yaml}, which each instance's copy replaces. */
    public static final String OUTLET_LINE =
            "uri: \"log:dev.metakit.inbox.feed.outlet?exchangeFormatter=#bean:changeLine\"";
    public static final List<String> IDS = List.of("inbox-a", "inbox-b");
    /** How often the stop losses of an account move: 25 times a second. */
    private static final Duration MOVE_EVERY = Duration.ofMillis(40);
    /**
     * The positions of each account whose stop losses move together: a reconcile of the account writes a change for
     * each, so the feed gets more changes per account than the account has reconciles (about 11 a second each here)
     */
    public static final int MOVING_POSITIONS = 2;

    private final int accounts;
    private final FakeMetaKit metakit;
    private final RecordingFeedOutlet outlet = new RecordingFeedOutlet();
    private final Map<String, InboxProcess> processes = new LinkedHashMap<>();
    private final List<SignedLoad> loads = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    /** change id -> when it was written (its reconciled_at), for the changes seen committed so far */
    private final Map<String, Instant> writtenAt = new ConcurrentHashMap<>();
    private volatile boolean running = true;

    /** The test database emptied, the double with a position on each of accounts 1..n, the two instances made. */
    public FeedPair(Path workDir, int accounts) throws Exception {
        this.accounts = accounts;
        this.metakit = FakeMetaKit.onCleanDatabase(accounts);
        for (String id : IDS) {
            processes.put(id, instance(workDir, id));
        }
    }

    /**
     * Starts both instances, the market and {@code loadThreads} clients per instance, each sending {@code ratePerThread}
     * deliveries a second round robin over the accounts.
     */
    public FeedPair start(int loadThreads, int ratePerThread) {
        InboxProcess.startAll(processes.values());
        background("market", this::moveStopLosses);
        background("written", this::watchWrittenChanges);
        for (InboxProcess p : processes.values()) {
            loads.add(new SignedLoad(p.webhookUri(), RunningInbox.SECRET, loadThreads, ratePerThread, accounts).start());
        }
        return this;
    }

    public InboxProcess process(String id) {
        return processes.get(id);
    }

    public RecordingFeedOutlet outlet() {
        return outlet;
    }

    public static String other(String id) {
        return id.equals(IDS.get(0)) ? IDS.get(1) : IDS.get(0);
    }

    /** Stops the market and the deliveries (the instances run on). */
    public void stopTraffic() throws InterruptedException {
        running = false;
        for (Thread t : threads) {
            t.join(5_000);
        }
        for (SignedLoad load : loads) {
            load.stop();
        }
        loads.clear();
    }

    /** feed_owners: instance -> accounts it owns. */
    public static Map<String, Set<Long>> ownedAccounts() throws Exception {
        Map<String, Set<Long>> out = new HashMap<>();
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "select owner_instance, account_id from feed_owners"); ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                out.computeIfAbsent(rs.getString(1), k -> new TreeSet<>()).add(rs.getLong(2));
            }
        }
        return out;
    }

    /** Of an instance's accounts, those it sent a change of within the last {@code within}. */
    public Set<Long> sentRecently(String instance, Set<Long> of, Duration within) {
        long since = System.nanoTime() - within.toNanos();
        Set<Long> out = new TreeSet<>();
        outlet.receipts().stream().filter(r -> r.instance().equals(instance) && r.nanos() > since
                && of.contains(r.account())).forEach(r -> out.add(r.account()));
        return out;
    }

    /** Changes seen committed and not at the receiver although written longer than {@code bound} ago. */
    public Set<String> waitingLongerThan(Duration bound) {
        Set<String> arrived = outlet.firstArrivals().keySet();
        Instant cutoff = Instant.now().minus(bound);
        Set<String> late = new TreeSet<>();
        writtenAt.forEach((id, at) -> {
            if (at.isBefore(cutoff) && !arrived.contains(id)) {
                late.add(id);
            }
        });
        return late;
    }

    /**
     * Per account, the time from written to first accepted (ms) of each change written in {@code [from, to)}, in seq
     * order; a change not at the receiver is counted up to now, and named in {@link Lags#missing()}.
     */
    public Lags lags(Instant from, Instant to) throws Exception {
        Map<String, RecordingFeedOutlet.Receipt> first = outlet.firstArrivals();
        Instant now = Instant.now();
        Map<Long, List<Long>> out = new TreeMap<>();
        List<String> missing = new ArrayList<>();
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "select account_id || ':' || seq, account_id, reconciled_at from position_changes"
                        + " where reconciled_at >= ? and reconciled_at < ? order by account_id, seq")) {
            s.setObject(1, from.atOffset(ZoneOffset.UTC));
            s.setObject(2, to.atOffset(ZoneOffset.UTC));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    RecordingFeedOutlet.Receipt r = first.get(rs.getString(1));
                    if (r == null) {
                        missing.add(rs.getString(1));
                    }
                    Instant written = rs.getObject(3, OffsetDateTime.class).toInstant();
                    out.computeIfAbsent(rs.getLong(2), a -> new ArrayList<>())
                            .add(Duration.between(written, r == null ? now : r.acceptedAt()).toMillis());
                }
            }
        }
        return new Lags(out, missing);
    }

    /** Per account, the written-to-accepted times (ms) in seq order, and the changes not at the receiver. */
    public record Lags(Map<Long, List<Long>> millis, List<String> missing) {
        public Map<Long, Long> longest() {
            Map<Long, Long> out = new TreeMap<>();
            millis.forEach((account, ms) -> out.put(account, ms.stream().mapToLong(Long::longValue).max().orElse(0)));
            return out;
        }

        /** Per account, changes per second over {@code length}. */
        public Map<Long, String> perSecond(Duration length) {
            Map<Long, String> out = new TreeMap<>();
            millis.forEach((account, ms) -> out.put(account,
                    String.format(Locale.ROOT, "%.1f", ms.size() * 1000.0 / length.toMillis())));
            return out;
        }
    }

    /** An instance as an operator runs it, the feed's outlet pointed at the receiver (its own path). */
    private InboxProcess instance(Path workDir, String id) throws Exception {
        Path routes = Files.createDirectories(workDir.resolve("routes-" + id));
        try (Stream<Path> files = Files.list(RunningInbox.basedir().resolve("routes"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".camel.yaml")).toList()) {
                String text = Files.readString(f);
                if (f.getFileName().toString().equals("changes.camel.yaml")) {
                    if (!text.contains(OUTLET_LINE)) {
                        throw new IllegalStateException("changes.camel.yaml has no line " + OUTLET_LINE);
                    }
                    text = text.replace(OUTLET_LINE, "uri: \"" + outlet.url(id) + "\"");
                }
                Files.writeString(routes.resolve(f.getFileName()), text);
            }
        }
        return new InboxProcess(Files.createDirectories(workDir.resolve(id)), metakit.urlFor(id), Map.of(
                "METAKIT_INSTANCE_ID", id,
                "DATABASE_URL", TestDatabase.jdbcUrl(id),
                "CAMEL_MAIN_ROUTESINCLUDEPATTERN", "file:" + routes + "/*.camel.yaml"));
    }

    private void background(String name, Runnable loop) {
        Thread t = new Thread(loop, "feed-pair-" + name);
        t.setDaemon(true);
        t.start();
        threads.add(t);
    }

    /** The market: the accounts' stop losses move in turn, each account's every {@link #MOVE_EVERY}. */
    private void moveStopLosses() {
        Instant opened = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);
        long n = 0;
        while (running) {
            n++;
            long account = 1 + n % accounts;
            for (int p = 0; p < MOVING_POSITIONS; p++) {
                metakit.open(account, account * 100 + p, "0.10", String.format(Locale.ROOT, "1.%05d", n % 100_000),
                        "0", opened);
            }
            LockSupport.parkNanos(MOVE_EVERY.toNanos() / accounts); // pacing, not a wait for a condition
        }
    }

    /** Notes each committed change's reconciled_at (polled every 50 ms). */
    private void watchWrittenChanges() {
        long after = 0;
        while (running) {
            try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                    "select change_id, account_id || ':' || seq, reconciled_at from position_changes"
                            + " where change_id > ? order by change_id")) {
                s.setLong(1, after);
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        after = Math.max(after, rs.getLong(1));
                        writtenAt.putIfAbsent(rs.getString(2), rs.getObject(3, OffsetDateTime.class).toInstant());
                    }
                }
            } catch (Exception e) {
                // the next poll tries again
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
    }

    /** SIGKILL ends a process left stopped as well. */
    @Override
    public void close() throws Exception {
        stopTraffic();
        InboxProcess.closeAll(processes.values());
        outlet.close();
        metakit.close();
    }
}
