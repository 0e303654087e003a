package dev.metakit.inbox.ingest;

/**
 * The delivery is refused before its commit: the inbox could not store it within the bound (the writers' queue holds
 * older deliveries than it can take in time, or this one already waited past it). Answered 503 with Retry-After, and
 * counted as shed: a load the database cannot carry is answered at once, never with a commit nobody waits for.
 */
public class InboxOverloadedException extends InboxUnavailableException {
    public InboxOverloadedException(String message) {
        super(message, false);
    }
}
