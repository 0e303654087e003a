package dev.metakit.inbox.conformance;

import dev.metakit.inbox.sandbox.WebhookSender;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Deliveries as MetaKit sends them (and as a forger would), signed by the sandbox's sender, the project's one signer. */
final class SignedDeliveries {
    private static final AtomicLong TICKETS = new AtomicLong(System.nanoTime() % 1_000_000_000L);
    // HTTP/1.1 as MetaKit sends (the client's default would ask a cleartext server to upgrade to HTTP/2)
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final RuntimeParts parts;

    SignedDeliveries(RuntimeParts parts) {
        this.parts = parts;
    }

    /** A fresh position.opened body for account 1, its ticket never used before in this JVM. */
    static byte[] body() {
        return ("{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":" + TICKETS.incrementAndGet()
                + "}}").getBytes(StandardCharsets.UTF_8);
    }

    static long now() {
        return System.currentTimeMillis() / 1000;
    }

    String signature(long t, byte[] body) {
        return WebhookSender.signatureHeader(t, List.of(WebhookSender.sign(parts.secrets().webhookSecret(), t, body)));
    }

    /** The inbox's key of a delivery signed with the runtime's secret at {@code t}. */
    String key(long t, byte[] body) {
        return t + ":" + WebhookSender.sign(parts.secrets().webhookSecret(), t, body);
    }

    /** A request to the webhook: {@code query} appended as is (null for none), header names and values in pairs. */
    HttpResponse<String> post(String query, byte[] body, String... headers) throws IOException, InterruptedException {
        URI uri = query == null ? parts.webhook() : URI.create(parts.webhook() + "?" + query);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A delivery as MetaKit sends it: signed now, its event in X-MetaKit-Event. */
    HttpResponse<String> deliver(byte[] body) throws IOException, InterruptedException {
        return post(null, body, "X-MetaKit-Signature", signature(now(), body), "X-MetaKit-Event", "position.opened");
    }

    /** {@code name=value} for a query string, both encoded. */
    static String param(String name, String value) {
        return URLEncoder.encode(name, StandardCharsets.UTF_8) + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    static String[] headers(String... namesAndValues) {
        return new ArrayList<>(List.of(namesAndValues)).toArray(String[]::new);
    }
}
