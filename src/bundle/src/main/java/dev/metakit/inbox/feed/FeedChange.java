package dev.metakit.inbox.feed;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One row of {@code position_changes}: a transition of one position, as the feed publishes it. */
public record FeedChange(long changeId, long accountId, long seq, long ticket, String kind, String status,
                         String symbol, String type, BigDecimal volume, BigDecimal priceOpen, Instant openedAt,
                         BigDecimal sl, BigDecimal tp, Instant closedAt, Long closeDealTicket, BigDecimal closePrice,
                         BigDecimal profit, List<String> changed, String source, Instant reconciledAt) {

    /** The downstream's dedupe key: stable across re-sends and replays. */
    public String id() {
        return accountId + ":" + seq;
    }

    /** The published JSON object: the change, and the position as it stands after it. */
    Map<String, Object> toJson() {
        Map<String, Object> position = new LinkedHashMap<>();
        position.put("ticket", ticket);
        position.put("status", status);
        position.put("symbol", symbol);
        position.put("type", type);
        position.put("volume", volume);
        position.put("priceOpen", priceOpen);
        position.put("openedAt", text(openedAt));
        position.put("sl", sl);
        position.put("tp", tp);
        position.put("closedAt", text(closedAt));
        position.put("closeDealTicket", closeDealTicket);
        position.put("closePrice", closePrice);
        position.put("profit", profit);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", id());
        json.put("accountId", accountId);
        json.put("seq", seq);
        json.put("ticket", ticket);
        json.put("kind", kind);
        json.put("changed", changed);
        json.put("source", source);
        json.put("reconciledAt", text(reconciledAt));
        json.put("position", position);
        return json;
    }

    private static String text(Instant t) {
        return t == null ? null : t.toString();
    }
}
