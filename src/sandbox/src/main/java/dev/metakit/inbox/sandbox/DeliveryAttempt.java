package dev.metakit.inbox.sandbox;

import java.net.http.HttpTimeoutException;
import java.time.Instant;

/**
 * One HTTP attempt of a delivery.
 *
 * @param copy         0 for the delivery, 1 for its duplicate (the same signed bytes sent again)
 * @param attempt      1..5 within that copy's retry schedule
 * @param startedNanos {@link System#nanoTime()} when the request left, for measuring gaps
 * @param status       the HTTP status, or 0 when there was none (timeout, connection refused)
 * @param error        why there was no status, else null
 */
public record DeliveryAttempt(String key, int copy, int attempt, Instant startedAt, long startedNanos, int status,
                              String error) {

    public boolean succeeded() {
        return status >= 200 && status < 300;
    }

    /** No answer within the request timeout (MetaKit's 5 s wait): MetaKit counts the attempt failed and sends again. */
    public boolean timedOut() {
        return status == 0 && error != null && error.startsWith(HttpTimeoutException.class.getSimpleName());
    }
}
