package dev.metakit.inbox.ingest;

/** The inbox could not commit a delivery in time: the sender must retry, so the route answers 503. */
public class InboxUnavailableException extends RuntimeException {
    public InboxUnavailableException(String message) {
        super(message);
    }

    public InboxUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Without a stack trace: a refusal by design, made thousands of times a second under overload. */
    protected InboxUnavailableException(String message, boolean withStackTrace) {
        super(message, null, false, withStackTrace);
    }
}
