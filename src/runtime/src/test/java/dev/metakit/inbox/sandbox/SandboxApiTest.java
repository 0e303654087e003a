package dev.metakit.inbox.sandbox;

import dev.metakit.inbox.support.MutableClock;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SandboxApiTest {
    private static final String KEY = "test-api-key";
    private final HttpClient http = HttpClient.newHttpClient();
    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:00:00Z"));
    private final SandboxMarket market = new SandboxMarket(3, 2, clock);
    private final WebhookEndpoints webhooks = new WebhookEndpoints(3, clock, Duration.ofMinutes(5));
    private SandboxApi api;

    @AfterEach
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    private SandboxApi start(SandboxFaults faults) throws IOException {
        api = new SandboxApi(market, webhooks, KEY, faults, 3, 0, 32);
        return api;
    }

    private HttpResponse<String> call(String method, String path, String key) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(api.baseUrl() + path))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return call("GET", path, KEY);
    }

    private static JsonNode json(HttpResponse<String> response) throws IOException {
        return SandboxJson.mapper().readTree(response.body());
    }

    @Test
    void a_request_without_the_bearer_key_or_with_a_wrong_one_is_401_with_an_error_body() throws Exception {
        start(SandboxFaults.none());

        for (HttpResponse<String> response : List.of(call("GET", "/v1/accounts/1/positions", null),
                call("GET", "/v1/accounts/1/positions", "wrong"), call("GET", "/v1/webhooks", "wrong"))) {
            assertThat(response.statusCode()).isEqualTo(401);
            assertThat(json(response).get("error").asText()).isNotBlank();
        }
        assertThat(api.stats().count("positions", 401)).isEqualTo(2);
    }

    @Test
    void an_unknown_account_is_404() throws Exception {
        start(SandboxFaults.none());

        assertThat(get("/v1/accounts/3/positions").statusCode()).isEqualTo(404);
        assertThat(get("/v1/accounts/abc/deals").statusCode()).isEqualTo(404);
        assertThat(json(get("/v1/accounts/99/deals")).get("error").asText()).contains("99");
    }

    @Test
    void positions_reflect_a_partial_close_and_decimals_stay_plain() throws Exception {
        start(SandboxFaults.none());
        long ticket = (long) market.open(1, "EURUSD", "buy", new BigDecimal("0.30"), BigDecimal.ZERO,
                BigDecimal.ZERO).data().get("ticket");
        market.partialClose(ticket, new BigDecimal("0.20"));

        HttpResponse<String> response = get("/v1/accounts/1/positions");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(v -> v.startsWith("application/json"));
        assertThat(response.body()).contains("\"volume\":0.10", "\"sl\":0", "\"tp\":0", "\"swap\":0.00")
                .doesNotContainPattern("\\d[eE][+-]?\\d");
        JsonNode position = json(response).get(0);
        assertThat(position.get("ticket").asLong()).isEqualTo(ticket);
        assertThat(position.get("volume").decimalValue()).isEqualTo(new BigDecimal("0.10"));
        assertThat(position.get("price_open").decimalValue().scale()).isEqualTo(5);
        assertThat(position.get("time").asText()).isEqualTo("2026-12-02T10:00:00Z");
        assertThat(position.has("profit")).isTrue();
        assertThat(get("/v1/accounts/2/positions").body()).isEqualTo("[]");
    }

    @Test
    void deals_are_filtered_on_time_with_both_bounds_inclusive_and_optional() throws Exception {
        start(SandboxFaults.none());
        long ticket = (long) market.open(2, "EURUSD", "sell", new BigDecimal("0.30"), BigDecimal.ZERO,
                BigDecimal.ZERO).data().get("ticket");                       // 10:00:00 in
        clock.advance(Duration.ofMinutes(1));
        market.partialClose(ticket, new BigDecimal("0.10"));                // 10:01:00 out
        clock.advance(Duration.ofMinutes(1));
        market.close(ticket);                                               // 10:02:00 out

        assertThat(times(get("/v1/accounts/2/deals"))).hasSize(3);
        assertThat(times(get("/v1/accounts/2/deals?from=2026-12-02T10:01:00Z&to=2026-12-02T10:02:00Z")))
                .containsExactly("2026-12-02T10:01:00Z", "2026-12-02T10:02:00Z");
        assertThat(times(get("/v1/accounts/2/deals?from=2026-12-02T10:00:00Z&to=2026-12-02T10:00:00Z")))
                .containsExactly("2026-12-02T10:00:00Z");
        assertThat(times(get("/v1/accounts/2/deals?from=2026-12-02T10:00:01Z"))).hasSize(2);
        assertThat(times(get("/v1/accounts/2/deals?to=2026-12-02T10:01:59Z"))).hasSize(2);
        JsonNode last = json(get("/v1/accounts/2/deals")).get(2);
        assertThat(last.get("entry").asText()).isEqualTo("out");
        assertThat(last.get("position_id").asLong()).isEqualTo(ticket);
        assertThat(last.get("volume").decimalValue()).isEqualTo(new BigDecimal("0.20"));
        for (String field : List.of("ticket", "order", "symbol", "type", "price", "profit", "commission", "swap")) {
            assertThat(last.has(field)).as(field).isTrue();
        }
        assertThat(get("/v1/accounts/2/deals?from=yesterday").statusCode()).isEqualTo(400);
    }

    private static List<String> times(HttpResponse<String> response) throws IOException {
        assertThat(response.statusCode()).isEqualTo(200);
        List<String> times = new ArrayList<>();
        json(response).forEach(deal -> times.add(deal.get("time").asText()));
        return times;
    }

    @Test
    void webhooks_show_the_last_delivery_and_rotate_returns_a_new_secret() throws Exception {
        start(SandboxFaults.none());
        WebhookEndpoint endpoint = webhooks.add(URI.create("http://127.0.0.1:1/hook"), "whsec_old");

        JsonNode before = json(get("/v1/webhooks")).get(0);
        assertThat(before.get("id").asText()).isEqualTo("wh_1");
        assertThat(before.get("url").asText()).isEqualTo("http://127.0.0.1:1/hook");
        assertThat(before.get("lastDeliveryStatus").isNull()).isTrue();
        assertThat(before.get("lastDeliveryAt").isNull()).isTrue();

        endpoint.recordDelivery(false);
        JsonNode after = json(get("/v1/webhooks")).get(0);
        assertThat(after.get("lastDeliveryStatus").asText()).isEqualTo("failed");
        assertThat(after.get("lastDeliveryAt").asText()).isEqualTo("2026-12-02T10:00:00Z");

        HttpResponse<String> rotated = call("POST", "/v1/webhooks/wh_1/rotate", KEY);
        assertThat(rotated.statusCode()).isEqualTo(200);
        assertThat(json(rotated).get("id").asText()).isEqualTo("wh_1");
        assertThat(json(rotated).get("secret").asText()).isEqualTo(endpoint.currentSecret()).isNotEqualTo("whsec_old");
        assertThat(endpoint.previousSecret()).isEqualTo("whsec_old");
        // the window in which the previous secret still signs: the rotation's time plus the endpoints' window
        assertThat(json(rotated).get("previousSecretExpiresAt").asText()).isEqualTo("2026-12-02T10:05:00Z");
        assertThat(call("POST", "/v1/webhooks/wh_9/rotate", KEY).statusCode()).isEqualTo(404);
        assertThat(call("GET", "/v1/webhooks/wh_1/rotate", KEY).statusCode()).isEqualTo(405);
    }

    @Test
    void a_rate_limited_request_is_429_with_retry_after_in_seconds() throws Exception {
        start(SandboxFaults.none().withApi429(1, 7));

        HttpResponse<String> response = get("/v1/accounts/1/positions");

        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("Retry-After")).hasValue("7");
        assertThat(json(response).get("error").asText()).isNotBlank();
        assertThat(api.stats().count("positions", 429)).isEqualTo(1);
    }

    @Test
    void a_server_fault_is_a_5xx_with_an_error_body() throws Exception {
        start(SandboxFaults.none().withApi5xxProbability(1));

        HttpResponse<String> response = get("/v1/accounts/1/deals");

        assertThat(response.statusCode()).isBetween(500, 599);
        assertThat(json(response).get("error").asText()).isNotBlank();
    }

    @Test
    void latency_and_slow_mode_delay_every_answer() throws Exception {
        start(SandboxFaults.none().withApiLatency(Duration.ofMillis(100)).withApiSlow(0, Duration.ofMillis(300)));

        long start = System.nanoTime();
        get("/v1/accounts/1/positions");
        long normalMillis = (System.nanoTime() - start) / 1_000_000;
        api.slowMode(true);
        start = System.nanoTime();
        get("/v1/accounts/1/positions");
        long slowMillis = (System.nanoTime() - start) / 1_000_000;

        assertThat(normalMillis).isGreaterThanOrEqualTo(100);
        assertThat(slowMillis).isGreaterThanOrEqualTo(400);
    }

    @Test
    void hundreds_of_concurrent_requests_are_served_and_counted() throws Exception {
        start(SandboxFaults.none());
        for (int i = 0; i < 50; i++) {
            market.randomOperation();
        }
        ExecutorService clients = Executors.newFixedThreadPool(32);
        try {
            List<Callable<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                String path = i % 2 == 0 ? "/v1/accounts/1/positions" : "/v1/accounts/2/deals";
                calls.add(() -> get(path).statusCode());
            }
            // served, each of them: how fast is the machine's (a time here would fail CI on a loaded machine)
            for (Future<Integer> result : clients.invokeAll(calls)) {
                assertThat(result.get()).isEqualTo(200);
            }
        } finally {
            clients.shutdownNow();
        }
        assertThat(api.stats().count("positions", 200)).isEqualTo(300);
        assertThat(api.stats().count("deals", null)).isEqualTo(300);
        assertThat(api.stats().total()).isEqualTo(600);
    }
}
