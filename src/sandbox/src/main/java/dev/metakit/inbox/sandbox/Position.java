package dev.metakit.inbox.sandbox;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;

/** An open position as the positions endpoint serves it; {@code ticket} is also the position id its deals carry. */
public record Position(long accountId, long ticket, String symbol, String type, BigDecimal volume,
                       BigDecimal priceOpen, BigDecimal sl, BigDecimal tp, Instant time) {

    public Position withVolume(BigDecimal newVolume) {
        return new Position(accountId, ticket, symbol, type, newVolume, priceOpen, sl, tp, time);
    }

    public Position withStops(BigDecimal newSl, BigDecimal newTp) {
        return new Position(accountId, ticket, symbol, type, volume, priceOpen, newSl, newTp, time);
    }

    /** The webhook payload's {@code data}: {ticket, symbol, type, volume, price_open, sl, tp}. */
    Map<String, Object> eventData() {
        return SandboxJson.object("ticket", ticket, "symbol", symbol, "type", type, "volume", volume,
                "price_open", priceOpen, "sl", sl, "tp", tp);
    }

    /** The positions endpoint's element: the payload fields plus the floating profit, swap and open time. */
    Map<String, Object> toJson(BigDecimal profit, BigDecimal swap) {
        Map<String, Object> json = eventData();
        json.put("profit", profit);
        json.put("swap", swap);
        json.put("time", time.toString());
        return json;
    }
}
