package dev.metakit.inbox.sandbox;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MetaKit's REST API on 127.0.0.1: positions, deals, webhooks, rotate; bearer key; faults (5xx, 429 with
 * Retry-After, latency, a slow mode). Every call is counted per endpoint and status.
 */
public final class SandboxApi implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SandboxApi.class);
    private static final Pattern POSITIONS = Pattern.compile("/v1/accounts/([^/]+)/positions");
    private static final Pattern DEALS = Pattern.compile("/v1/accounts/([^/]+)/deals");
    private static final Pattern WEBHOOKS = Pattern.compile("/v1/webhooks/?");
    private static final Pattern ROTATE = Pattern.compile("/v1/webhooks/([^/]+)/rotate");
    /* whether this thread's request is still counted in flight (a request is served on one thread, start to end) */
    private static final ThreadLocal<boolean[]> IN_FLIGHT = ThreadLocal.withInitial(() -> new boolean[1]);

    private final SandboxMarket market;
    private final WebhookEndpoints endpoints;
    private final byte[] apiKey;
    private final SandboxFaults faults;
    private final Random random;
    private final ApiCallStats stats = new ApiCallStats();
    private final HttpServer server;
    private final ThreadPoolExecutor executor;
    private volatile boolean slowMode;

    /** Binds 127.0.0.1:{@code port} (0: an ephemeral port, see {@link #port()}) and starts serving. */
    public SandboxApi(SandboxMarket market, WebhookEndpoints endpoints, String apiKey, SandboxFaults faults, long seed,
                      int port, int threads) throws IOException {
        this.market = market;
        this.endpoints = endpoints;
        this.apiKey = ("Bearer " + apiKey).getBytes(StandardCharsets.UTF_8);
        this.faults = faults;
        this.random = new Random(seed ^ 0xA11CE5L);
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 256);
        // bounded: a flood queues up to the limit, then the dispatcher thread answers itself (back-pressure)
        this.executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(4096), WebhookSender.daemon("metakit-sandbox-api"),
                new ThreadPoolExecutor.CallerRunsPolicy());
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** {@code http://127.0.0.1:<port>}: the consumer's METAKIT_API_URL. */
    public URI baseUrl() {
        return URI.create("http://127.0.0.1:" + port());
    }

    public ApiCallStats stats() {
        return stats;
    }

    /** While on, every request is slow by {@link SandboxFaults#apiSlowLatency()} (a MetaKit brown-out). */
    public void slowMode(boolean on) {
        this.slowMode = on;
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        String name = endpointName(path);
        stats.enter();
        IN_FLIGHT.get()[0] = true;
        try {
            respond(exchange, name, path);
        } catch (RuntimeException e) {
            LOG.warn("Sandbox API failed on {} {}", exchange.getRequestMethod(), path, e);
            send(exchange, name, 500, error("internal error: " + e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            send(exchange, name, 503, error("shutting down"));
        } finally {
            leave();
            exchange.close();
        }
    }

    private int respond(HttpExchange exchange, String name, String path) throws IOException, InterruptedException {
        String auth = exchange.getRequestHeaders().getFirst("Authorization");
        if (auth == null || !MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), apiKey)) {
            return send(exchange, name, 401, error(auth == null ? "missing bearer token" : "invalid api key"));
        }
        long latency = faults.apiLatency().toMillis();
        double faultRoll;
        boolean slow;
        synchronized (random) {
            faultRoll = random.nextDouble();
            slow = slowMode || random.nextDouble() < faults.apiSlowProbability();
        }
        if (slow) {
            latency += faults.apiSlowLatency().toMillis();
        }
        if (latency > 0) {
            Thread.sleep(latency);  // simulated latency, not a wait on a condition
        }
        if (faultRoll < faults.api5xxProbability()) {
            return send(exchange, name, 503, error("service temporarily unavailable"));
        }
        if (faultRoll < faults.api5xxProbability() + faults.api429Probability()) {
            exchange.getResponseHeaders().set("Retry-After", Integer.toString(faults.retryAfterSeconds()));
            return send(exchange, name, 429, error("rate limit exceeded"));
        }
        String method = exchange.getRequestMethod();
        Matcher m;
        if ((m = POSITIONS.matcher(path)).matches()) {
            return getForAccount(exchange, name, method, m.group(1),
                    account -> send(exchange, name, 200, market.positionsJson(account)));
        }
        if ((m = DEALS.matcher(path)).matches()) {
            return getForAccount(exchange, name, method, m.group(1), account -> deals(exchange, name, account));
        }
        if (WEBHOOKS.matcher(path).matches()) {
            if (!"GET".equals(method)) {
                return methodNotAllowed(exchange, name, "GET");
            }
            return send(exchange, name, 200, endpoints.all().stream().map(WebhookEndpoint::toJson).toList());
        }
        if ((m = ROTATE.matcher(path)).matches()) {
            if (!"POST".equals(method)) {
                return methodNotAllowed(exchange, name, "POST");
            }
            String id = m.group(1);
            if (endpoints.find(id).isEmpty()) {
                return send(exchange, name, 404, error("unknown webhook " + id));
            }
            SecretRotation rotation = endpoints.rotate(id);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("id", rotation.webhookId());
            body.put("secret", rotation.secret());
            body.put("previousSecretExpiresAt", rotation.previousSignedUntil().toString());
            return send(exchange, name, 200, body);
        }
        return send(exchange, name, 404, error("no such endpoint " + path));
    }

    /** What an account's GET answers once its method and its account are known good. */
    private interface AccountAnswer {
        int answer(long account) throws IOException;
    }

    private int getForAccount(HttpExchange exchange, String name, String method, String id, AccountAnswer answer)
            throws IOException {
        if (!"GET".equals(method)) {
            return methodNotAllowed(exchange, name, "GET");
        }
        Long account = account(id);
        if (account == null) {
            return send(exchange, name, 404, error("unknown account " + id));
        }
        return answer.answer(account);
    }

    private int deals(HttpExchange exchange, String name, long account) throws IOException {
        Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
        Instant from;
        Instant to;
        try {
            from = instant(query.get("from"));
            to = instant(query.get("to"));
        } catch (DateTimeParseException e) {
            return send(exchange, name, 400, error("from/to must be ISO-8601 instants like 2026-12-02T10:15:30Z"));
        }
        return send(exchange, name, 200, market.deals(account, from, to).stream().map(Deal::toJson).toList());
    }

    private Long account(String raw) {
        try {
            long id = Long.parseLong(raw);
            return market.hasAccount(id) ? id : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private int methodNotAllowed(HttpExchange exchange, String name, String allowed) throws IOException {
        exchange.getResponseHeaders().set("Allow", allowed);
        return send(exchange, name, 405, error("method not allowed"));
    }

    /** The request is no longer in flight once its answer is about to go out (once per request). */
    private void leave() {
        boolean[] counted = IN_FLIGHT.get();
        if (counted[0]) {
            counted[0] = false;
            stats.exit();
        }
    }

    /** Counts the call before answering, so a client that has its answer also sees it counted. */
    private int send(HttpExchange exchange, String name, int status, Object body) throws IOException {
        stats.record(name, status);
        leave();
        byte[] bytes = SandboxJson.write(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
        return status;
    }

    private static Map<String, String> error(String message) {
        return Map.of("error", message);
    }

    private static Instant instant(String value) {
        return value == null || value.isBlank() ? null : Instant.parse(value);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> query = new LinkedHashMap<>();
        if (raw == null) {
            return query;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            query.put(key, value);
        }
        return query;
    }

    private static String endpointName(String path) {
        if (POSITIONS.matcher(path).matches()) {
            return "positions";
        }
        if (DEALS.matcher(path).matches()) {
            return "deals";
        }
        if (WEBHOOKS.matcher(path).matches()) {
            return "webhooks";
        }
        if (ROTATE.matcher(path).matches()) {
            return "rotate";
        }
        return "other";
    }
}
