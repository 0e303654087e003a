package dev.metakit.inbox.ingest;

/**
 * A verified delivery on its way into the inbox. {@code event} and {@code accountId} are what the worker and
 * operators filter on; either may be null when the body does not say (it is stored all the same). The
 * inbox stamps {@code received_at} itself, at the commit. {@code traceParent} is the ingest span's context (W3C
 * traceparent text), null when tracing is off.
 */
public record Delivery(String key, String event, Long accountId, byte[] body, String traceParent) {

    public Delivery(String key, String event, Long accountId, byte[] body) {
        this(key, event, accountId, body, null);
    }

    /** This delivery stored with the ingest span's context. */
    public Delivery traced(String traceParent) {
        return new Delivery(key, event, accountId, body, traceParent);
    }
}
