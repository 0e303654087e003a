package dev.metakit.inbox.inbox;

/**
 * A claimed inbox row: the delivery as stored, how many times it has been claimed (this one included), and whether
 * an operator replayed it (the changes its reconcile finds are then the feed's {@code source=replay}).
 */
public record InboxRow(String key, String event, Long accountId, byte[] body, int attempts, boolean replayed) {

    public InboxRow(String key, String event, Long accountId, byte[] body, int attempts) {
        this(key, event, accountId, body, attempts, false);
    }
}
