package dev.metakit.inbox.ingest;

/**
 * A verified delivery on its way into the inbox. {@code event} and {@code accountId} are what the worker and
 * operators filter on; either may be null when the body does not say (it is stored all the same). The
 * inbox stamps {@code received_at} itself, at the commit.
 */
public record Delivery(String key, String event, Long accountId, byte[] body) {
}
