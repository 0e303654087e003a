package dev.metakit.inbox.ingest;

/**
 * The bundle is stopping, so the inbox takes no more deliveries: answered 503 like any refusal, so MetaKit retries,
 * but by design rather than a fault, and logged as such ({@link UnstoredDeliveryLog}).
 */
public class InboxStoppingException extends InboxUnavailableException {
    public InboxStoppingException(String message) {
        super(message);
    }
}
