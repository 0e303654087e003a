package dev.metakit.inbox.feed;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The publisher's backoff per account, which forgives: it counts the account's failures since its last success. The
 * first failure is tried again at once (an outlet that refuses one send in ten costs a busy account one resend per
 * refusal: a wait per refusal would cap the account below its traffic, and its lag would climb); from the second
 * failure in a row the wait is the base, doubling up to the maximum, only while the outlet keeps failing; the first
 * change the outlet takes again clears it.
 */
final class FeedBackoff {
    private final long baseMillis;
    private final long maxMillis;
    private final Map<Long, Backoff> accounts = new ConcurrentHashMap<>();

    /** failures since the account's last success, and when it may be tried again */
    record Backoff(int failures, long retryAtNanos) {
        long delayMillis(long nowNanos) {
            return Math.max(0, TimeUnit.NANOSECONDS.toMillis(retryAtNanos - nowNanos));
        }
    }

    FeedBackoff(long baseMillis, long maxMillis) {
        this.baseMillis = baseMillis;
        this.maxMillis = maxMillis;
    }

    /** One more failure of the account since its last success. */
    Backoff failed(long account) {
        return accounts.compute(account, (a, prev) -> {
            int n = prev == null ? 1 : prev.failures() + 1;
            long delay = n == 1 ? 0 : Math.min(maxMillis, baseMillis << Math.min(n - 2, 20));
            return new Backoff(n, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay));
        });
    }

    /** The outlet took a change of the account: its failures are forgiven. Returns whether it had any. */
    boolean succeeded(long account) {
        return accounts.remove(account) != null;
    }

    boolean backingOff(long account) {
        Backoff b = accounts.get(account);
        return b != null && System.nanoTime() - b.retryAtNanos() < 0;
    }

    /** The account's failures since its last success (0: none). */
    int failures(long account) {
        Backoff b = accounts.get(account);
        return b == null ? 0 : b.failures();
    }
}
