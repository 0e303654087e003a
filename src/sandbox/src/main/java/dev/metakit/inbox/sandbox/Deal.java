package dev.metakit.inbox.sandbox;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;

/** One executed deal; {@code entry} is {@code in} for an open and {@code out} for a partial or full close. */
public record Deal(long accountId, long ticket, long positionId, long order, String symbol, String type, String entry,
                   BigDecimal volume, BigDecimal price, BigDecimal profit, BigDecimal commission, BigDecimal swap,
                   Instant time) {

    Map<String, Object> toJson() {
        return SandboxJson.object("ticket", ticket, "position_id", positionId, "order", order, "symbol", symbol,
                "type", type, "entry", entry, "volume", volume, "price", price, "profit", profit,
                "commission", commission, "swap", swap, "time", time.toString());
    }
}
