package dev.metakit.inbox.sandbox;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** One executed deal; {@code entry} is {@code in} for an open and {@code out} for a partial or full close. */
public record Deal(long accountId, long ticket, long positionId, long order, String symbol, String type, String entry,
                   BigDecimal volume, BigDecimal price, BigDecimal profit, BigDecimal commission, BigDecimal swap,
                   Instant time) {

    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("ticket", ticket);
        json.put("position_id", positionId);
        json.put("order", order);
        json.put("symbol", symbol);
        json.put("type", type);
        json.put("entry", entry);
        json.put("volume", volume);
        json.put("price", price);
        json.put("profit", profit);
        json.put("commission", commission);
        json.put("swap", swap);
        json.put("time", time.toString());
        return json;
    }
}
