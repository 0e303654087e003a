package dev.metakit.inbox.bench;

import dev.metakit.inbox.sandbox.SandboxApi;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxMarket;
import dev.metakit.inbox.sandbox.WebhookEndpoints;

import java.io.IOException;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The MetaKit side of the worker benchmarks: a {@link SandboxMarket} of N accounts with some open positions, served by
 * the sandbox's REST API on 127.0.0.1 with a fixed response latency and no faults. Nothing sends webhooks: the
 * benchmarks put their rows into the inbox themselves.
 */
final class BenchApi implements AutoCloseable {
    static final String API_KEY = "bench-api-key";

    final SandboxMarket market;
    final SandboxApi api;
    /** account → its open tickets */
    final Map<Long, List<Long>> openTickets = new HashMap<>();

    BenchApi(int accounts, int openPerAccount, Duration latency, int apiThreads) throws IOException {
        // The JDK HttpServer writes a response's headers and body apart: with Nagle's algorithm on, the body waits for
        // the client's delayed ACK, ~40 ms more per call than the configured latency. Read once, at the JVM's first
        // HttpServer: bench/worker-bench.sh also passes it on the command line.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
        market = new SandboxMarket(20261202L, accounts, Clock.systemUTC());
        for (long a = 1; a <= accounts; a++) {
            List<Long> tickets = new ArrayList<>();
            for (int j = 0; j < openPerAccount; j++) {
                String symbol = SandboxMarket.SYMBOLS.get(j % SandboxMarket.SYMBOLS.size());
                market.open(a, symbol, j % 2 == 0 ? "buy" : "sell", new BigDecimal("0.10"), BigDecimal.ZERO,
                        BigDecimal.ZERO);
            }
            market.positions(a).forEach(p -> tickets.add(p.ticket()));
            openTickets.put(a, tickets);
        }
        SandboxFaults faults = SandboxFaults.none().withApiLatency(latency);
        api = new SandboxApi(market, new WebhookEndpoints(1L, Clock.systemUTC(), Duration.ofMinutes(5)), API_KEY,
                faults, 1L, 0, apiThreads);
    }

    /** The bodies the drain benchmark writes name ticket {@code base + (account - 1) * k + j} as open: check it. */
    void requireTickets(long base) {
        openTickets.forEach((account, tickets) -> {
            for (int j = 0; j < tickets.size(); j++) {
                long expected = base + (account - 1) * tickets.size() + j;
                if (tickets.get(j) != expected) {
                    throw new IllegalStateException("account " + account + " has ticket " + tickets.get(j)
                            + ", the benchmark's rows would name " + expected);
                }
            }
        });
    }

    /** positions + deals calls answered so far (the reconcile's calls; the status watch's are apart). */
    long reconcileCalls() {
        return api.stats().count("positions", null) + api.stats().count("deals", null);
    }

    String callsLine() {
        return api.stats().snapshot().toString();
    }

    @Override
    public void close() {
        api.close();
    }
}
