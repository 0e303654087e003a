package dev.metakit.inbox.ingest;

import java.time.Instant;

/**
 * A verified delivery on its way into the inbox. {@code event} and {@code accountId} are what the worker and
 * operators filter on; either may be null when the body does not say (it is stored all the same). {@code signedAt}
 * is the verified signature's {@code t}, the same for every retry of the delivery: the inbox's partition key, so a
 * retry meets its row (V12). The inbox stamps {@code received_at} itself, at the commit. {@code traceParent} is the
 * ingest span's context (W3C traceparent text), null when tracing is off.
 */
public record Delivery(String key, String event, Long accountId, byte[] body, Instant signedAt, String traceParent) {

    public Delivery(String key, String event, Long accountId, byte[] body, Instant signedAt) {
        this(key, event, accountId, body, signedAt, null);
    }

    /** This delivery stored with the ingest span's context. */
    public Delivery traced(String traceParent) {
        return new Delivery(key, event, accountId, body, signedAt, traceParent);
    }
}
