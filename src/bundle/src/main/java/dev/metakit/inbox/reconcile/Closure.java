package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiDeal;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;

/**
 * What one position's deals say about its end. {@code last} is the closing deal latest by time then ticket (the one
 * that brought the volume to zero); {@code complete} is false while the deals seen close less volume than they
 * opened (a partial close whose final deal is not visible yet). The opening fields come from its first {@code in}
 * deal, or failing that from the last closing deal (type reversed: a buy is closed by a sell).
 */
record Closure(ApiDeal last, BigDecimal closeProfit, boolean complete, String symbol, String type, BigDecimal volume,
               BigDecimal priceOpen, Instant openedAt) {

    static final Comparator<ApiDeal> BY_TIME_THEN_TICKET = Comparator
            .comparing(ApiDeal::time, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparingLong(ApiDeal::ticket);

    /** Null when the deals hold nothing for this position. */
    static Closure of(long ticket, List<ApiDeal> deals) {
        List<ApiDeal> mine = deals.stream().filter(d -> d.positionId() == ticket).sorted(BY_TIME_THEN_TICKET).toList();
        List<ApiDeal> ins = mine.stream().filter(ApiDeal::isOpening).toList();
        List<ApiDeal> outs = mine.stream().filter(ApiDeal::isClosing).toList();
        if (ins.isEmpty() && outs.isEmpty()) {
            return null;
        }
        ApiDeal last = outs.isEmpty() ? null : outs.get(outs.size() - 1);
        BigDecimal profit = sum(outs.stream().map(ApiDeal::profit).toList());
        BigDecimal inVolume = sum(ins.stream().map(ApiDeal::volume).toList());
        BigDecimal outVolume = sum(outs.stream().map(ApiDeal::volume).toList());
        boolean reversed = outs.stream().anyMatch(d -> ApiDeal.ENTRY_INOUT.equals(d.entry()));
        boolean complete = last != null
                && (reversed || inVolume == null || outVolume == null || outVolume.compareTo(inVolume) >= 0);
        if (!ins.isEmpty()) {
            ApiDeal first = ins.get(0);
            return new Closure(last, profit, complete, first.symbol(), first.type(), inVolume, first.price(),
                    first.time());
        }
        return new Closure(last, profit, complete, last.symbol(), reverse(last.type()), reversed ? null : outVolume,
                null, null);
    }

    private static BigDecimal sum(List<BigDecimal> values) {
        BigDecimal total = null;
        for (BigDecimal v : values) {
            if (v != null) {
                total = total == null ? v : total.add(v);
            }
        }
        return total;
    }

    private static String reverse(String dealType) {
        if ("buy".equalsIgnoreCase(dealType)) {
            return "sell";
        }
        if ("sell".equalsIgnoreCase(dealType)) {
            return "buy";
        }
        return null;
    }
}
