package dev.metakit.inbox.worker;

/** A claimed inbox row: the delivery as stored, and how many times it has been claimed (this one included). */
public record InboxRow(String key, String event, Long accountId, byte[] body, int attempts) {
}
