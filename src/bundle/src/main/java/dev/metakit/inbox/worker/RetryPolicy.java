package dev.metakit.inbox.worker;

import dev.metakit.inbox.metakit.MetaKitApiException;

import java.time.Duration;
import java.util.Optional;

/**
 * How long a row waits before its next attempt: exponential from {@code base}, capped, or MetaKit's Retry-After when
 * it gives one. After {@code maxAttempts} claims a row is failed, whatever went wrong.
 */
public record RetryPolicy(int maxAttempts, Duration base, Duration max) {

    public boolean exhausted(int attempts) {
        return attempts >= maxAttempts;
    }

    /** MetaKit's Retry-After when it sent one, else the backoff for this attempt. */
    public Duration delay(int attempts, Throwable failure) {
        return asked(failure).orElseGet(() -> backoff(attempts));
    }

    /** The delay MetaKit asked for with {@code failure} (its Retry-After), if it asked. */
    public Optional<Duration> asked(Throwable failure) {
        return failure instanceof MetaKitApiException api ? api.retryAfter() : Optional.empty();
    }

    private Duration backoff(int attempts) {
        long factor = 1L << Math.min(Math.max(attempts - 1, 0), 20);
        Duration d = base.multipliedBy(factor);
        return d.compareTo(max) > 0 ? max : d;
    }
}
