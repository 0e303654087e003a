package dev.metakit.inbox.feed;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One row of {@code position_changes}: a transition of one position, as the feed publishes it, with the context of the
 * reconcile that wrote it (W3C traceparent text, null when tracing was off), which goes downstream as a header.
 */
public record FeedChange(long changeId, long accountId, long seq, long ticket, String kind, String status,
                         String symbol, String type, BigDecimal volume, BigDecimal priceOpen, Instant openedAt,
                         BigDecimal sl, BigDecimal tp, Instant closedAt, Long closeDealTicket, BigDecimal closePrice,
                         BigDecimal profit, List<String> changed, String source, Instant reconciledAt,
                         String traceParent) {

    /** A change without a trace context (written with tracing off). */
    public FeedChange(long changeId, long accountId, long seq, long ticket, String kind, String status,
                      String symbol, String type, BigDecimal volume, BigDecimal priceOpen, Instant openedAt,
                      BigDecimal sl, BigDecimal tp, Instant closedAt, Long closeDealTicket, BigDecimal closePrice,
                      BigDecimal profit, List<String> changed, String source, Instant reconciledAt) {
        this(changeId, accountId, seq, ticket, kind, status, symbol, type, volume, priceOpen, openedAt, sl, tp,
                closedAt, closeDealTicket, closePrice, profit, changed, source, reconciledAt, null);
    }

    /** The downstream's dedupe key: stable across re-sends and replays. */
    public String id() {
        return accountId + ":" + seq;
    }

    /** The published JSON object: the change, and the position as it stands after it. */
    Map<String, Object> toJson() {
        Map<String, Object> position = object("ticket", ticket, "status", status, "symbol", symbol, "type", type,
                "volume", volume, "priceOpen", priceOpen, "openedAt", text(openedAt), "sl", sl, "tp", tp,
                "closedAt", text(closedAt), "closeDealTicket", closeDealTicket, "closePrice", closePrice,
                "profit", profit);
        return object("id", id(), "accountId", accountId, "seq", seq, "ticket", ticket, "kind", kind,
                "changed", changed, "source", source, "reconciledAt", text(reconciledAt), "position", position);
    }

    /** A JSON object of these names and values, in this order (a value may be null, which Map.of refuses). */
    private static Map<String, Object> object(Object... namesAndValues) {
        Map<String, Object> json = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            json.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return json;
    }

    private static String text(Instant t) {
        return t == null ? null : t.toString();
    }
}
