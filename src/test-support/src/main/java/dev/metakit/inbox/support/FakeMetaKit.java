package dev.metakit.inbox.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A programmable MetaKit REST API over real HTTP for the worker tests: positions and deals per account as JSON
 * strings, webhooks, a queue of forced failures, and a count of calls by path kind. Each client (a consumer process)
 * can get an address of its own ({@link #urlFor}), so a test can {@link #hold} the answers to one client's calls for
 * chosen accounts: the calls stay in flight, and so do the inbox rows they were made for.
 */
public final class FakeMetaKit implements AutoCloseable {
    public static final String API_KEY = "mk_test_key_123";
    private static final Pattern ACCOUNT_PATH = Pattern.compile("/v1/accounts/(\\d+)/(positions|deals)");

    private volatile HttpServer server;
    private final int port;
    private final Map<Long, List<String>> positions = new ConcurrentHashMap<>();
    private final Map<Long, List<String>> deals = new ConcurrentHashMap<>();
    private volatile String webhooks = "[]";
    private final List<int[]> failures = new ArrayList<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> accountAnswers = new ConcurrentHashMap<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private volatile long latencyMillis;
    /** While non-zero every call answers this status (429 with Retry-After: 1): an outage of known length. */
    private volatile int outageStatus;
    /** Which calls (client, account) wait for their answer; re-tested whenever it changes. */
    private volatile BiPredicate<String, Long> held = (client, account) -> false;
    private final Object holdChanged = new Object();
    private final Map<String, HttpServer> clients = new ConcurrentHashMap<>();

    public FakeMetaKit() {
        server = listen(0);
        port = server.getAddress().getPort();
    }

    private HttpServer listen(int onPort) {
        HttpServer s;
        try {
            s = HttpServer.create(new InetSocketAddress("127.0.0.1", onPort), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        s.setExecutor(Executors.newFixedThreadPool(16));
        s.createContext("/", ex -> handle(ex, ""));
        s.start();
        return s;
    }

    /**
     * An address of this API for one client: the same state, its calls told apart by {@link #hold}. Its threads are
     * not pooled to a fixed number, so a held call never queues another one behind it.
     */
    public synchronized String urlFor(String client) {
        HttpServer s = clients.computeIfAbsent(client, c -> {
            HttpServer server;
            try {
                server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            server.setExecutor(Executors.newCachedThreadPool());
            server.createContext("/", ex -> handle(ex, c));
            server.start();
            return server;
        });
        return "http://127.0.0.1:" + s.getAddress().getPort();
    }

    /**
     * From now on, account calls (positions, deals) of a client for which {@code which} holds get no answer until it
     * no longer does (a later {@code hold} or {@link #release}); calls already waiting are tested again at once.
     */
    public void hold(BiPredicate<String, Long> which) {
        synchronized (holdChanged) {
            held = which;
            holdChanged.notifyAll();
        }
    }

    /** Every held call is answered, and no call is held any more. */
    public void release() {
        hold((client, account) -> false);
    }

    private void waitWhileHeld(String client, long account) throws InterruptedException {
        synchronized (holdChanged) {
            while (held.test(client, account)) {
                holdChanged.wait();
            }
        }
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    /** Stops listening: calls are refused at connect, as when the API is down. State is kept for {@link #up()}. */
    public synchronized void down() {
        server.stop(0);
    }

    /** Listens again on the same port after {@link #down()}. */
    public synchronized void up() {
        server = listen(port);
    }

    /** Every call answers {@code status} from now on (429 carries Retry-After: 1), until {@link #recover()}. */
    public void outage(int status) {
        outageStatus = status;
    }

    public void recover() {
        outageStatus = 0;
    }

    public void account(long id) {
        positions.putIfAbsent(id, new ArrayList<>());
        deals.putIfAbsent(id, new ArrayList<>());
    }

    public synchronized void open(long account, long ticket, String volume, String sl, String tp, Instant time) {
        account(account);
        positions.get(account).removeIf(p -> p.contains("\"ticket\":" + ticket + ","));
        positions.get(account).add(("{\"ticket\":%d,\"symbol\":\"EURUSD\",\"type\":\"buy\",\"volume\":%s,"
                + "\"price_open\":1.08450,\"sl\":%s,\"tp\":%s,\"profit\":0.00,\"swap\":0.00,\"time\":\"%s\","
                + "\"brand_new_field\":{\"x\":1}}").formatted(ticket, volume, sl, tp, time));
    }

    public synchronized void deal(long account, long dealTicket, long positionId, String entry, String volume,
                                  String price, String profit, Instant time) {
        account(account);
        deals.get(account).add(("{\"ticket\":%d,\"position_id\":%d,\"order\":%d,\"symbol\":\"EURUSD\",\"type\":\"sell\","
                + "\"entry\":\"%s\",\"volume\":%s,\"price\":%s,\"profit\":%s,\"commission\":0.00,\"swap\":0.00,"
                + "\"time\":\"%s\"}").formatted(dealTicket, positionId, dealTicket, entry, volume, price, profit, time));
    }

    /**
     * Accounts 1 to {@code accounts} each list one open position, ticket {@code account * 100}, of {@code volume},
     * opened a minute ago: the truth the fault tests' accounts converge to.
     */
    /**
     * The fault tests' starting point: the test database emptied, and a test double with one 0.10 lot position open
     * on each of accounts 1..n.
     */
    public static FakeMetaKit onCleanDatabase(int accounts) {
        TestDatabase.truncateAll();
        return withOnePositionEach(accounts);
    }

    /** A test double with one 0.10 lot position open on each of accounts 1..n (ticket: the account times 100). */
    public static FakeMetaKit withOnePositionEach(int accounts) {
        FakeMetaKit metakit = new FakeMetaKit();
        metakit.openOnePositionEach(accounts, "0.10");
        return metakit;
    }

    public void openOnePositionEach(int accounts, String volume) {
        Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);
        for (long account = 1; account <= accounts; account++) {
            open(account, account * 100, volume, "0", "0", t0);
        }
    }

    public synchronized void close(long account, long ticket) {
        positions.get(account).removeIf(p -> p.contains("\"ticket\":" + ticket + ","));
    }

    public void webhooks(String json) {
        webhooks = json;
    }

    /**
     * The next {@code count} account calls (positions, deals) answer {@code status} (429 carries Retry-After:
     * retryAfterSeconds). Other calls (the delivery-status watch's GET /v1/webhooks) do not use them up: a test
     * counting a reconcile's retries must not lose one to a watch that happened to run first.
     */
    public synchronized void failNext(int count, int status, int retryAfterSeconds) {
        failures.add(new int[]{count, status, retryAfterSeconds});
    }

    public void latency(long millis) {
        latencyMillis = millis;
    }

    public int calls(String kind) {
        AtomicInteger n = calls.get(kind);
        return n == null ? 0 : n.get();
    }

    /** How many account calls (positions, deals) were answered {@code status}. */
    public int accountCallsAnswered(int status) {
        AtomicInteger n = accountAnswers.get(status);
        return n == null ? 0 : n.get();
    }

    public int totalCalls() {
        return calls.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    public int maxInFlight() {
        return maxInFlight.get();
    }

    private synchronized int[] nextFailure() {
        if (failures.isEmpty()) {
            return null;
        }
        int[] f = failures.get(0);
        if (--f[0] <= 0) {
            failures.remove(0);
        }
        return f;
    }

    private void handle(HttpExchange ex, String client) throws IOException {
        int now = inFlight.incrementAndGet();
        maxInFlight.accumulateAndGet(now, Math::max);
        try {
            String path = ex.getRequestURI().getPath();
            Matcher m = ACCOUNT_PATH.matcher(path);
            String kind = m.matches() ? m.group(2) : path.equals("/v1/webhooks") ? "webhooks" : "other";
            calls.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
            if (latencyMillis > 0) {
                Thread.sleep(latencyMillis);
            }
            if (m.matches()) {
                waitWhileHeld(client, Long.parseLong(m.group(1)));
            }
            if (!("Bearer " + API_KEY).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                answer(ex, m.matches(), 401, "{\"error\":\"invalid api key\"}");
                return;
            }
            int outage = outageStatus;
            if (outage != 0) {
                if (outage == 429) {
                    ex.getResponseHeaders().add("Retry-After", "1");
                }
                answer(ex, m.matches(), outage, "{\"error\":\"outage\"}");
                return;
            }
            int[] failure = m.matches() ? nextFailure() : null;
            if (failure != null) {
                if (failure[1] == 429) {
                    ex.getResponseHeaders().add("Retry-After", String.valueOf(failure[2]));
                }
                answer(ex, m.matches(), failure[1], "{\"error\":\"forced failure\"}");
                return;
            }
            if (kind.equals("webhooks")) {
                answer(ex, m.matches(), 200, webhooks);
                return;
            }
            if (!m.matches()) {
                answer(ex, m.matches(), 404, "{\"error\":\"not found\"}");
                return;
            }
            long account = Long.parseLong(m.group(1));
            List<String> source = (kind.equals("positions") ? positions : deals).get(account);
            if (source == null) {
                answer(ex, m.matches(), 404, "{\"error\":\"unknown account\"}");
                return;
            }
            synchronized (this) {
                answer(ex, m.matches(), 200, "[" + String.join(",", source) + "]");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private void answer(HttpExchange ex, boolean accountCall, int status, String body) throws IOException {
        if (accountCall) {
            accountAnswers.computeIfAbsent(status, k -> new AtomicInteger()).incrementAndGet();
        }
        send(ex, status, body);
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
        ex.close();
    }

    @Override
    public void close() {
        release();
        server.stop(0);
        clients.values().forEach(s -> s.stop(0));
    }
}
