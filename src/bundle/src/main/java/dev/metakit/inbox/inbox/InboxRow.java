package dev.metakit.inbox.inbox;

/**
 * A claimed inbox row: the delivery as stored, how many times it has been claimed (this one included), whether
 * an operator replayed it (the changes its reconcile finds are then the feed's {@code source=replay}), and the ingest
 * span's context it was stored with (W3C traceparent text; null when it was stored with tracing off).
 */
public record InboxRow(String key, String event, Long accountId, byte[] body, int attempts, boolean replayed,
                       String traceParent) {

    public InboxRow(String key, String event, Long accountId, byte[] body, int attempts) {
        this(key, event, accountId, body, attempts, false, null);
    }
}
