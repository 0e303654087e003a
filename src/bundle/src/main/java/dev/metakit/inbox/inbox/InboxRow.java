package dev.metakit.inbox.inbox;

import java.time.Instant;

/**
 * A claimed inbox row: the delivery as stored, how many times it has been claimed (this one included), whether
 * an operator replayed it (the changes its reconcile finds are then the feed's {@code source=replay}), the ingest
 * span's context it was stored with (W3C traceparent text; null when it was stored with tracing off), and its
 * partition key ({@code signed_at}), which the statements on it name with its key ({@link #inboxKey()}), and how
 * many reconciles of its account had failed in a row when it was claimed ({@code accountFailures}: the streak in
 * the account's backoff, 0 without one), which the account's next delay follows.
 */
public record InboxRow(String key, String event, Long accountId, byte[] body, int attempts, boolean replayed,
                       String traceParent, Instant signedAt, int accountFailures) {

    public InboxRow(String key, String event, Long accountId, byte[] body, int attempts, Instant signedAt) {
        this(key, event, accountId, body, attempts, false, null, signedAt, 0);
    }

    /** What names this row in the worker's statements. */
    public InboxKey inboxKey() {
        return new InboxKey(key, signedAt);
    }
}
