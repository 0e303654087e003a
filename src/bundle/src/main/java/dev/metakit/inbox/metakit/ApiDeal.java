package dev.metakit.inbox.metakit;

import java.math.BigDecimal;
import java.time.Instant;

/**
 * One entry of {@code GET /v1/accounts/{id}/deals}. {@code entry} is lower-cased by the mapping
 * ({@code in}, {@code out}, {@code inout}, {@code out_by}); only {@code ticket} and {@code positionId} are guaranteed.
 */
public record ApiDeal(long ticket, long positionId, Long order, String symbol, String type, String entry,
                      BigDecimal volume, BigDecimal price, BigDecimal profit, BigDecimal commission, BigDecimal swap,
                      Instant time) {

    public static final String ENTRY_IN = "in";
    public static final String ENTRY_OUT = "out";
    public static final String ENTRY_INOUT = "inout";
    public static final String ENTRY_OUT_BY = "out_by";

    /** A deal that reduces, closes or reverses its position. */
    public boolean isClosing() {
        return ENTRY_OUT.equals(entry) || ENTRY_OUT_BY.equals(entry) || ENTRY_INOUT.equals(entry);
    }

    public boolean isOpening() {
        return ENTRY_IN.equals(entry);
    }
}
