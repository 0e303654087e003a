package dev.metakit.inbox.inbox;

import java.time.Instant;

/**
 * A claimed inbox row: the delivery as stored, how many times it has been claimed (this one included), whether
 * an operator replayed it (the changes its reconcile finds are then the feed's {@code source=replay}), the ingest
 * span's context it was stored with (W3C traceparent text; null when it was stored with tracing off), and its
 * partition key ({@code signed_at}), which the statements on it name with its key ({@link #inboxKey()}), and how
 * many reconciles of its account had failed in a row when it was claimed ({@code accountFailures}: the streak in
 * the account's backoff, 0 without one), which the account's next delay follows; {@code backlog} when the row is an
 * account's retry probe with more of the account's rows pending behind it (null otherwise).
 */
public record InboxRow(String key, String event, Long accountId, byte[] body, int attempts, boolean replayed,
                       String traceParent, Instant signedAt, int accountFailures, Backlog backlog) {

    public InboxRow(String key, String event, Long accountId, byte[] body, int attempts, Instant signedAt) {
        this(key, event, accountId, body, attempts, false, null, signedAt, 0, null);
    }

    /**
     * The rows pending behind a retry's probe, as the claim saw them: {@code claimedAt}, the claim's time on the
     * database's clock (the rows' {@code next_attempt_at} is on it too); {@code pendingFrom}, where pending rows begin
     * ({@code inbox_pending_since}: no pending row is signed before it), null when that is the first partition.
     */
    public record Backlog(Instant claimedAt, Instant pendingFrom) {
    }

    /** This row as claimed without a backlog behind it. */
    public InboxRow withoutBacklog() {
        return new InboxRow(key, event, accountId, body, attempts, replayed, traceParent, signedAt, accountFailures,
                null);
    }

    /** What names this row in the worker's statements. */
    public InboxKey inboxKey() {
        return new InboxKey(key, signedAt);
    }
}
