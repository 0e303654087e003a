package dev.metakit.inbox.sandbox;

import java.util.List;

/** A position that no longer appears in the positions list, with every {@code out} deal that reduced or closed it. */
public record ClosedPosition(long accountId, long ticket, String symbol, String type, List<Deal> closingDeals) {
    public ClosedPosition {
        closingDeals = List.copyOf(closingDeals);
    }

    /** The deal that took the volume to zero. */
    public Deal finalDeal() {
        return closingDeals.get(closingDeals.size() - 1);
    }
}
