package dev.metakit.inbox.ingest;

/** A delivery whose body is larger than {@code metakit.max-body-bytes}: answered 413, nothing stored. */
public final class BodyTooLargeException extends Exception {
    private static final long serialVersionUID = 1L;

    public BodyTooLargeException(long maxBytes) {
        // no stack trace: an expected rejection, always thrown from the same place
        super("body larger than " + maxBytes + " bytes", null, false, false);
    }
}
