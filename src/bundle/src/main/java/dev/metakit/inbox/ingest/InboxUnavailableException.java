package dev.metakit.inbox.ingest;

/** The inbox could not commit a delivery in time: the sender must retry, so the route answers 503. */
public class InboxUnavailableException extends RuntimeException {
    public InboxUnavailableException(String message) {
        super(message);
    }

    public InboxUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
