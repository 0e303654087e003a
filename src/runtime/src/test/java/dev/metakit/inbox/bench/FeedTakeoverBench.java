package dev.metakit.inbox.bench;

import dev.metakit.inbox.support.FeedPair;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RecordingFeedOutlet.Receipt;
import dev.metakit.inbox.support.TestDatabase;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The change feed as its downstream feels it through a fault of one of two publishers ({@link FeedPair}: two instances
 * of the jar on one PostgreSQL, the outlet an HTTP receiver answering at once, one POST per change, the accounts'
 * two positions per account whose stop losses move 25 times a second, deliveries coming to both instances). After {@code --warmup} seconds:
 * <ul>
 * <li>{@code --fault freeze}: the instance owning more accounts stopped (SIGSTOP) for {@code --seconds}, then resumed;</li>
 * <li>{@code kill}: that instance killed with SIGKILL (not restarted), then {@code --seconds} measured;</li>
 * <li>{@code outage}: the receiver answering 503 to everything for {@code --seconds}.</li>
 * </ul>
 * Then {@code --after} seconds more, the traffic stopped and the feed drained. {@code --receiver-millis N}: the
 * receiver answers each POST N ms after it came (a downstream service's own latency; 0, at once, by default). Prints
 * one {@code FEED-TAKEOVER} line: per account the time from a change written (its {@code reconciled_at}) to the
 * receiver accepting it (max, p99, p50) for every change written from 2 s before the fault to the end, the changes
 * written per second per account during the fault, whether every account's first arrivals are its seqs in order
 * without a gap, and the load average.
 * {@code -Dmetakit.test.jar} chooses the jar (bench/feed-takeover.sh runs the build before beside the current one).
 */
public final class FeedTakeoverBench {
    private FeedTakeoverBench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>(Map.of("--fault", "freeze", "--seconds", "30", "--warmup", "20",
                "--after", "30", "--accounts", "4", "--threads", "4", "--rate", "25", "--label", "current",
                "--receiver-millis", "0"));
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!opts.containsKey(args[i])) {
                throw new IllegalArgumentException("unknown option " + args[i] + "; known: " + opts.keySet());
            }
            opts.put(args[i], args[i + 1]);
        }
        String fault = opts.get("--fault");
        Duration length = Duration.ofSeconds(Long.parseLong(opts.get("--seconds")));
        int accounts = Integer.parseInt(opts.get("--accounts"));
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        double loadBefore = os.getSystemLoadAverage();
        Path work = Files.createTempDirectory("feed-takeover-bench");
        long receiverMillis = Long.parseLong(opts.get("--receiver-millis"));
        try (FeedPair pair = new FeedPair(work, accounts)) {
            pair.outlet().answerAfter(receiverMillis);
            pair.start(Integer.parseInt(opts.get("--threads")), Integer.parseInt(opts.get("--rate")));
            sleep(Duration.ofSeconds(Long.parseLong(opts.get("--warmup"))));
            Map<String, Set<Long>> owned = FeedPair.ownedAccounts();
            String a = FeedPair.IDS.get(0);
            String victimId = owned.getOrDefault(a, Set.of()).size()
                    >= owned.getOrDefault(FeedPair.other(a), Set.of()).size() ? a : FeedPair.other(a);
            InboxProcess victim = pair.process(victimId);
            Instant faultAt = Instant.now();
            long faultNanos = System.nanoTime();
            switch (fault) {
                case "freeze" -> {
                    victim.pause();
                    sleep(length);
                    victim.resume();
                }
                case "kill" -> {
                    victim.kill();
                    sleep(length);
                }
                case "outage" -> {
                    pair.outlet().refuse(true);
                    sleep(length);
                    pair.outlet().refuse(false);
                }
                default -> throw new IllegalArgumentException("--fault freeze, kill or outage, not " + fault);
            }
            sleep(Duration.ofSeconds(Long.parseLong(opts.get("--after"))));
            pair.stopTraffic();
            Instant trafficEnded = Instant.now();
            long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (TestDatabase.scalar("select count(*) from position_changes where published_at is null") > 0
                    && System.nanoTime() < drainDeadline) {
                sleep(Duration.ofMillis(200)); // polling for the drain, bounded
            }
            FeedPair.Lags lags = pair.lags(faultAt.minusSeconds(2), trafficEnded);
            Set<Long> victims = owned.getOrDefault(victimId, Set.of());
            System.out.printf(Locale.ROOT, "FEED-TAKEOVER %s fault=%s %d s (victim %s, owned %s) accounts=%d"
                            + " receiver %d ms:"
                            + " its accounts' first change accepted from the other instance after the fault at +ms %s;"
                            + " per account written -> accepted ms %s; overall max %d ms; changes/s per account in"
                            + " the fault %s; not accepted %d; in order without a gap: %s; load average %.1f before,"
                            + " %.1f after%n",
                    opts.get("--label"), fault, length.toSeconds(), victimId, victims, accounts, receiverMillis,
                    firstFromOther(pair, victimId, victims, faultNanos), summary(lags), lags.longest().values().stream().mapToLong(Long::longValue).max()
                            .orElse(0), pair.lags(faultAt, faultAt.plus(length)).perSecond(length),
                    lags.missing().size(), inOrder(pair, accounts), loadBefore, os.getSystemLoadAverage());
        }
        System.exit(0); // the embedded database's and the HTTP servers' threads
    }

    /** Per account: max / p99 / p50 of the written-to-accepted times. */
    private static Map<Long, String> summary(FeedPair.Lags lags) {
        Map<Long, String> out = new TreeMap<>();
        lags.millis().forEach((account, ms) -> {
            List<Long> sorted = new ArrayList<>(ms);
            sorted.sort(null);
            out.put(account, String.format(Locale.ROOT, "max %d p99 %d p50 %d (n %d)", sorted.get(sorted.size() - 1),
                    sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(sorted.size() * 0.99) - 1)),
                    sorted.get(sorted.size() / 2), sorted.size()));
        });
        return out;
    }

    /** Per account of the victim, how long after the fault the other instance's first send of it was accepted (ms). */
    private static Map<Long, Long> firstFromOther(FeedPair pair, String victimId, Set<Long> victims, long faultNanos) {
        Map<Long, Long> out = new TreeMap<>();
        for (Receipt r : pair.outlet().receipts()) {
            if (r.nanos() > faultNanos && victims.contains(r.account()) && !r.instance().equals(victimId)) {
                out.putIfAbsent(r.account(), TimeUnit.NANOSECONDS.toMillis(r.nanos() - faultNanos));
            }
        }
        return out;
    }

    /** Whether each account's first arrivals are 1, 2, 3, ... */
    private static boolean inOrder(FeedPair pair, int accounts) {
        Map<Long, Long> expected = new HashMap<>();
        for (Receipt r : pair.outlet().firstArrivals().values()) {
            long next = expected.getOrDefault(r.account(), 1L);
            if (r.seq() != next) {
                return false;
            }
            expected.put(r.account(), next + 1);
        }
        return expected.size() == accounts;
    }

    private static void sleep(Duration d) {
        LockSupport.parkNanos(d.toNanos()); // the benchmark's phases are times, not conditions
    }
}
