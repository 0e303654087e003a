package dev.metakit.inbox.sandbox;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * API calls counted per endpoint ({@code positions}, {@code deals}, {@code webhooks}, {@code rotate}, {@code other}) and
 * status, and the requests being served at once (the most since the start or the last {@link #resetMaxInFlight}).
 */
public final class ApiCallStats {
    private final Map<String, Map<Integer, LongAdder>> counts = new ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();

    void enter() {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
    }

    void exit() {
        inFlight.decrementAndGet();
    }

    /** Requests being served right now. */
    public int inFlight() {
        return inFlight.get();
    }

    /** The most requests served at once since the start or the last reset. */
    public int maxInFlight() {
        return maxInFlight.get();
    }

    public void resetMaxInFlight() {
        maxInFlight.set(inFlight.get());
    }

    void record(String endpoint, int status) {
        counts.computeIfAbsent(endpoint, e -> new ConcurrentHashMap<>())
                .computeIfAbsent(status, s -> new LongAdder())
                .increment();
    }

    /** endpoint → (status → calls), sorted. */
    public Map<String, Map<Integer, Long>> snapshot() {
        Map<String, Map<Integer, Long>> copy = new TreeMap<>();
        counts.forEach((endpoint, byStatus) -> {
            Map<Integer, Long> statuses = new TreeMap<>();
            byStatus.forEach((status, n) -> statuses.put(status, n.sum()));
            copy.put(endpoint, statuses);
        });
        return copy;
    }

    public long count(String endpoint, Integer status) {
        Map<Integer, LongAdder> byStatus = counts.get(endpoint);
        if (byStatus == null) {
            return 0;
        }
        if (status == null) {
            return byStatus.values().stream().mapToLong(LongAdder::sum).sum();
        }
        LongAdder n = byStatus.get(status);
        return n == null ? 0 : n.sum();
    }

    public long total() {
        return counts.values().stream().flatMap(m -> m.values().stream()).mapToLong(LongAdder::sum).sum();
    }

    /** Calls answered other than 2xx. */
    public long errors() {
        return counts.values().stream().flatMap(m -> m.entrySet().stream())
                .filter(e -> e.getKey() < 200 || e.getKey() >= 300)
                .mapToLong(e -> e.getValue().sum()).sum();
    }
}
