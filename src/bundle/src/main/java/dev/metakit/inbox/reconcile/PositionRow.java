package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiPosition;

import java.math.BigDecimal;
import java.time.Instant;

/** One {@code positions} row as the reconciler reads and writes it (without account_id and updated_at). */
record PositionRow(long ticket, String status, String symbol, String type, BigDecimal volume, BigDecimal priceOpen,
                   BigDecimal sl, BigDecimal tp, BigDecimal profit, BigDecimal swap, Instant openedAt,
                   Instant closedAt, Long closeDealTicket, BigDecimal closePrice, BigDecimal closeProfit) {

    static final String OPEN = "open";
    static final String CLOSING = "closing";
    static final String CLOSED = "closed";

    /** The row for a position the API lists: exactly its fields, no close data. */
    static PositionRow open(ApiPosition p) {
        return new PositionRow(p.ticket(), OPEN, p.symbol(), p.type(), p.volume(), p.priceOpen(), p.sl(), p.tp(),
                p.profit(), p.swap(), p.time(), null, null, null, null);
    }

    boolean isClosed() {
        return CLOSED.equals(status);
    }

    /** Not listed any more, closing deal not seen yet: keeps what is known, gaps filled from the deals. */
    PositionRow closing(Closure c) {
        return new PositionRow(ticket, CLOSING, or(symbol, c.symbol()), or(type, c.type()), or(volume, c.volume()),
                or(priceOpen, c.priceOpen()), sl, tp, profit, swap, or(openedAt, c.openedAt()),
                null, null, null, null);
    }

    /** Closed by its deals: the close data comes from the last closing deal and the sum over all of them. */
    PositionRow closed(Closure c) {
        return new PositionRow(ticket, CLOSED, or(symbol, c.symbol()), or(type, c.type()), or(volume, c.volume()),
                or(priceOpen, c.priceOpen()), sl, tp, profit, swap, or(openedAt, c.openedAt()),
                c.last().time(), c.last().ticket(), c.last().price(), c.closeProfit());
    }

    /** A ticket known only from a hint: closing, nothing else known yet. */
    static PositionRow placeholder(long ticket) {
        return new PositionRow(ticket, CLOSING, null, null, null, null, null, null, null, null, null, null, null, null,
                null);
    }

    /** The same row in another unsettled status, without close data. */
    PositionRow withStatus(String newStatus) {
        return new PositionRow(ticket, newStatus, symbol, type, volume, priceOpen, sl, tp, profit, swap, openedAt,
                null, null, null, null);
    }

    private static <T> T or(T mine, T fallback) {
        return mine != null ? mine : fallback;
    }
}
