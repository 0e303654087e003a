package dev.metakit.inbox.metakit;

import java.time.Instant;

/** One entry of {@code GET /v1/webhooks}. {@code lastDeliveryStatus} is {@code succeeded}, {@code failed} or null. */
public record ApiWebhook(String id, String url, String lastDeliveryStatus, Instant lastDeliveryAt) {

    public boolean lastDeliveryFailed() {
        return "failed".equalsIgnoreCase(lastDeliveryStatus);
    }
}
