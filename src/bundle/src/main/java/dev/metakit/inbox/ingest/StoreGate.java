package dev.metakit.inbox.ingest;

/**
 * Whether the ingest route may store deliveries now. The store step asks it before every insert, so an answer must
 * cost no more than a field read.
 */
public interface StoreGate {
    /** Why no delivery may be stored now (one line, answered 503 so MetaKit retries), or null when they may. */
    String refusal();
}
