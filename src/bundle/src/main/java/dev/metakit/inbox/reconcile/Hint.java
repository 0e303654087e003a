package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.WebhookEvent;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A ticket named by a delivery: a reason to look for that ticket's deals, never state. {@code createdAt} may be null
 * (then the reconciler's clock stands in for it).
 */
public record Hint(long ticket, String event, Instant createdAt) {

    public static final String POSITION_CLOSED = "position.closed";

    /** The hints in a batch of parsed deliveries: those that name a ticket. */
    public static List<Hint> from(Collection<WebhookEvent> events) {
        List<Hint> hints = new ArrayList<>();
        for (WebhookEvent e : events) {
            if (e != null && e.ticket() != null) {
                hints.add(new Hint(e.ticket(), e.event(), e.createdAt()));
            }
        }
        return hints;
    }

    boolean saysClosed() {
        return POSITION_CLOSED.equals(event);
    }
}
