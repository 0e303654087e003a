package dev.metakit.inbox.metakit;

import java.math.BigDecimal;
import java.time.Instant;

/** One entry of {@code GET /v1/accounts/{id}/positions}: an open position. Only {@code ticket} is guaranteed. */
public record ApiPosition(long ticket, String symbol, String type, BigDecimal volume, BigDecimal priceOpen,
                          BigDecimal sl, BigDecimal tp, BigDecimal profit, BigDecimal swap, Instant time) {
}
