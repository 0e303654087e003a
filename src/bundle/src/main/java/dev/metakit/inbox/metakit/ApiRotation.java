package dev.metakit.inbox.metakit;

import java.time.Instant;

/**
 * The answer of {@code POST /v1/webhooks/{id}/rotate}. {@code previousSecretExpiresAt} is null when MetaKit does not
 * say how long it signs with the previous secret. Its {@code toString} leaves the secret out.
 */
public record ApiRotation(String id, String secret, Instant previousSecretExpiresAt) {
    @Override
    public String toString() {
        return "ApiRotation[id=" + id + ", previousSecretExpiresAt=" + previousSecretExpiresAt + "]";
    }
}
