package dev.metakit.inbox.reconcile;

import java.time.Instant;
import java.util.Set;

/**
 * Whether a reconcile needs {@code GET /v1/accounts/{id}/deals}, and for which window ({@code to} null means now,
 * {@code from} is never null when needed). {@code tickets} are the positions that made it needed, for the log.
 */
public record DealsQuery(boolean needed, Instant from, Instant to, Set<Long> tickets) {

    private static final DealsQuery NOT_NEEDED = new DealsQuery(false, null, null, Set.of());

    public DealsQuery {
        tickets = Set.copyOf(tickets);
    }

    public static DealsQuery notNeeded() {
        return NOT_NEEDED;
    }

    public static DealsQuery from(Instant from, Set<Long> tickets) {
        return new DealsQuery(true, from, null, tickets);
    }
}
