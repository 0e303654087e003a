package dev.metakit.inbox.metakit;

import java.time.Duration;
import java.util.Optional;

/**
 * A MetaKit REST call that did not answer 2xx. Carries what the retry policy needs: the status, and
 * {@code Retry-After} when MetaKit rate-limits. The message names the call and MetaKit's error text, never the key.
 */
public class MetaKitApiException extends RuntimeException {
    private final int status;
    private final Duration retryAfter;

    /** @param retryAfter MetaKit's Retry-After, or null when it sent none */
    public MetaKitApiException(int status, Duration retryAfter, String message) {
        super(message);
        this.status = status;
        this.retryAfter = retryAfter;
    }

    public int status() {
        return status;
    }

    /** MetaKit's Retry-After, when it sent one. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    public boolean unauthorized() {
        return status == 401 || status == 403;
    }

    /** The request itself cannot succeed as it is (unknown account, bad request): retrying will not help. */
    public boolean permanent() {
        return status == 404 || status == 400 || status == 422;
    }
}
