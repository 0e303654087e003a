package dev.metakit.inbox.sandbox;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One registered webhook endpoint: where events go, the secrets they are signed with, how the last delivery went. */
public final class WebhookEndpoint {
    public static final String SUCCEEDED = "succeeded";
    public static final String FAILED = "failed";

    private final String id;
    private final URI url;
    private final Clock clock;
    private String currentSecret;
    private String previousSecret;
    private Instant previousSignedUntil;
    private String lastDeliveryStatus;
    private Instant lastDeliveryAt;

    WebhookEndpoint(String id, URI url, String secret, Clock clock) {
        this.id = id;
        this.url = url;
        this.currentSecret = secret;
        this.clock = clock;
    }

    public String id() {
        return id;
    }

    public URI url() {
        return url;
    }

    public synchronized String currentSecret() {
        return currentSecret;
    }

    /** The secret before the last rotation, or null if there was none (kept after its window, for the operator). */
    public synchronized String previousSecret() {
        return previousSecret;
    }

    /** Whether a rotation window is open now, so that deliveries carry a second {@code v1}. */
    public synchronized boolean rotationWindowOpen() {
        return previousSecret != null && clock.instant().isBefore(previousSignedUntil);
    }

    /** Current secret first, then the previous one while its window is open. */
    synchronized List<String> signingSecrets() {
        List<String> secrets = new ArrayList<>(2);
        secrets.add(currentSecret);
        if (rotationWindowOpen()) {
            secrets.add(previousSecret);
        }
        return secrets;
    }

    synchronized SecretRotation rotate(String newSecret, Duration window) {
        previousSecret = currentSecret;
        currentSecret = newSecret;
        previousSignedUntil = clock.instant().plus(window);
        return new SecretRotation(id, currentSecret, previousSecret, previousSignedUntil);
    }

    synchronized void recordDelivery(boolean succeeded) {
        lastDeliveryStatus = succeeded ? SUCCEEDED : FAILED;
        lastDeliveryAt = clock.instant();
    }

    /** {@code succeeded}, {@code failed}, or null before any delivery ended. */
    public synchronized String lastDeliveryStatus() {
        return lastDeliveryStatus;
    }

    public synchronized Instant lastDeliveryAt() {
        return lastDeliveryAt;
    }

    /** The {@code GET /v1/webhooks} element. */
    synchronized Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", id);
        json.put("url", url.toString());
        json.put("lastDeliveryStatus", lastDeliveryStatus);
        json.put("lastDeliveryAt", lastDeliveryAt == null ? null : lastDeliveryAt.toString());
        return json;
    }
}
