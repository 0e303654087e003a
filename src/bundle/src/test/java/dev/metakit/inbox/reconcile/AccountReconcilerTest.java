package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiDeal;
import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.metakit.WebhookEvent;
import dev.metakit.inbox.support.ReconcileFixture;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AccountReconcilerTest extends ReconcileFixture {

    // ---- open

    @Test
    void aListedPositionBecomesAnOpenRowWithTheApiFields() {
        ReconcileResult r = apply(T0, List.of(position(100, "0.10", "1.08450", T0)), List.of());

        assertThat(r.opened()).isEqualTo(1);
        assertThat(r.changes()).isEqualTo(1);
        Map<String, Object> row = row(100);
        assertThat(row.get("status")).isEqualTo("open");
        assertThat(row.get("symbol")).isEqualTo("EURUSD");
        assertThat(row.get("type")).isEqualTo("buy");
        assertThat((BigDecimal) row.get("volume")).isEqualByComparingTo("0.10");
        assertThat((BigDecimal) row.get("price_open")).isEqualByComparingTo("1.08450");
        assertThat((BigDecimal) row.get("profit")).isEqualByComparingTo("-1.25");
        assertThat(instant(row, "opened_at")).isEqualTo(T0);
        assertThat(row.get("closed_at")).isNull();
        assertThat(row.get("close_deal_ticket")).isNull();
    }

    @Test
    void slAndTpOfZeroStayZeroNotNull() {
        apply(T0, List.of(position(100, "0.10", "1.08450", T0)), List.of());

        Map<String, Object> row = row(100);
        assertThat(row.get("sl")).isNotNull();
        assertThat((BigDecimal) row.get("sl")).isEqualByComparingTo("0");
        assertThat((BigDecimal) row.get("tp")).isEqualByComparingTo("0");
    }

    @Test
    void aChangedFieldUpdatesOnlyThatRow() {
        apply(T0, List.of(position(100, "0.10", "1.08450", T0), position(101, "0.20", "1.1", T0)), List.of());
        Object untouched = row(101).get("updated_at");

        ApiPosition moved = new ApiPosition(100, "EURUSD", "buy", new BigDecimal("0.10"), new BigDecimal("1.08450"),
                new BigDecimal("1.07"), BigDecimal.ZERO, new BigDecimal("-1.25"), BigDecimal.ZERO, T0);
        ReconcileResult r = apply(T0.plusSeconds(60), List.of(moved, position(101, "0.20", "1.1", T0)), List.of());

        assertThat(r.updated()).isEqualTo(1);
        assertThat(r.changes()).isEqualTo(1);
        assertThat((BigDecimal) row(100).get("sl")).isEqualByComparingTo("1.07");
        assertThat(row(101).get("updated_at")).isEqualTo(untouched);
    }

    // ---- close before open

    @Test
    void aCloseDeliveredBeforeItsOpenLeavesExactlyOneClosedRowWithItsDeal() {
        DealsQuery plan = reconciler.planDeals(ACCOUNT, List.of(), List.of(TICKET_200_CLOSED));
        assertThat(plan.needed()).isTrue();
        assertThat(plan.from()).isEqualTo(T0.plusSeconds(600).minus(Duration.ofDays(1)));
        assertThat(plan.to()).isNull();
        assertThat(plan.tickets()).containsExactly(200L);

        ReconcileResult r = reconciler.apply(ACCOUNT, T0.plusSeconds(700), List.of(), TICKET_200_DEALS,
                List.of(TICKET_200_CLOSED));

        assertThat(r.closed()).isEqualTo(1);
        assertThat(count()).isEqualTo(1);
        Map<String, Object> row = assertClosed(200, 2, "1.08550", "10.00", T0.plusSeconds(500));
        assertThat(row.get("symbol")).isEqualTo("EURUSD");
        assertThat(row.get("type")).isEqualTo("buy");
        assertThat((BigDecimal) row.get("volume")).isEqualByComparingTo("0.10");
        assertThat((BigDecimal) row.get("price_open")).isEqualByComparingTo("1.08450");
        assertThat(instant(row, "opened_at")).isEqualTo(T0);
    }

    @Test
    void aLatePositionOpenedHintNeverReopensAClosedRow() {
        reconciler.apply(ACCOUNT, T0.plusSeconds(700), List.of(), TICKET_200_DEALS, List.of(TICKET_200_CLOSED));
        List<Map<String, Object>> before = table();

        Hint lateOpen = new Hint(200, "position.opened", T0);
        assertThat(reconciler.planDeals(ACCOUNT, List.of(), List.of(lateOpen)).needed()).isFalse();
        ReconcileResult r = reconciler.apply(ACCOUNT, T0.plusSeconds(800), List.of(), List.of(), List.of(lateOpen));

        assertThat(r.changes()).isZero();
        assertThat(row(200).get("status")).isEqualTo("closed");
        assertThat(table()).isEqualTo(before);
    }

    @Test
    void aCloseHintWhoseDealIsNotVisibleYetLeavesAClosingRowThatALaterReconcileCompletes() {
        Hint closedHint = new Hint(300, "position.closed", T0.plusSeconds(600));
        ReconcileResult first = reconciler.apply(ACCOUNT, T0.plusSeconds(610), List.of(), List.of(), List.of(closedHint));

        assertThat(first.closing()).isEqualTo(1);
        assertThat(row(300).get("status")).isEqualTo("closing");
        DealsQuery plan = reconciler.planDeals(ACCOUNT, List.of(), List.of());
        assertThat(plan.needed()).isTrue();
        assertThat(plan.tickets()).containsExactly(300L);

        List<ApiDeal> deals = List.of(deal(1, 300, "in", "sell", "1", "2000.5", "0", T0),
                deal(2, 300, "out", "buy", "1", "1999.5", "100", T0.plusSeconds(590)));
        ReconcileResult second = reconciler.apply(ACCOUNT, T0.plusSeconds(900), List.of(), deals, List.of());

        assertThat(second.closed()).isEqualTo(1);
        Map<String, Object> row = row(300);
        assertThat(row.get("status")).isEqualTo("closed");
        assertThat(row.get("type")).isEqualTo("sell");
        assertThat(row.get("close_deal_ticket")).isEqualTo(2L);
        assertThat(instant(row, "opened_at")).isEqualTo(T0);
    }

    @Test
    void anOpenHintForATicketNowhereToBeSeenRecordsNothing() {
        Hint openHint = new Hint(301, "position.opened", T0);
        assertThat(reconciler.planDeals(ACCOUNT, List.of(), List.of(openHint)).needed()).isTrue();

        ReconcileResult r = reconciler.apply(ACCOUNT, T0.plusSeconds(60), List.of(), List.of(), List.of(openHint));

        assertThat(r.changes()).isZero();
        assertThat(count()).isZero();
    }

    // ---- vanished

    @Test
    void aVanishedPositionWithoutItsDealIsClosingThenClosedWhenTheDealAppears() {
        apply(T0, List.of(position(400, "0.10", "1.08450", T0)), List.of());

        DealsQuery plan = reconciler.planDeals(ACCOUNT, List.of(), List.of());
        assertThat(plan.needed()).isTrue();
        assertThat(plan.from()).isEqualTo(T0.minus(AccountReconciler.OPEN_MARGIN));
        assertThat(plan.to()).isNull();

        ReconcileResult lagging = apply(T0.plusSeconds(60), List.of(), List.of());
        assertThat(lagging.closing()).isEqualTo(1);
        assertThat(row(400).get("status")).isEqualTo("closing");
        assertThat((BigDecimal) row(400).get("volume")).isEqualByComparingTo("0.10");

        ReconcileResult done = apply(T0.plusSeconds(120), List.of(),
                List.of(deal(9, 400, "out", "sell", "0.10", "1.08600", "15", T0.plusSeconds(30))));
        assertThat(done.closed()).isEqualTo(1);
        Map<String, Object> row = row(400);
        assertThat(row.get("status")).isEqualTo("closed");
        assertThat(row.get("close_deal_ticket")).isEqualTo(9L);
        assertThat(instant(row, "closed_at")).isEqualTo(T0.plusSeconds(30));
        assertThat(instant(row, "opened_at")).isEqualTo(T0);
    }

    @Test
    void partialClosesKeepThePositionOpenUntilItIsNoLongerListedThenTheLastOutClosesIt() {
        apply(T0, List.of(position(500, "0.30", "1.1000", T0)), List.of());
        List<ApiDeal> deals = new ArrayList<>();
        deals.add(deal(1, 500, "in", "buy", "0.30", "1.1000", "0", T0));
        deals.add(deal(2, 500, "out", "sell", "0.10", "1.1010", "1.00", T0.plusSeconds(10)));
        deals.add(deal(3, 500, "out", "sell", "0.10", "1.1020", "2.00", T0.plusSeconds(20)));

        apply(T0.plusSeconds(30), List.of(position(500, "0.10", "1.1000", T0)), deals);
        assertThat(row(500).get("status")).isEqualTo("open");
        assertThat(row(500).get("close_deal_ticket")).isNull();

        // the last 0.10 is not in the deals yet: not closed on a partial deal
        apply(T0.plusSeconds(40), List.of(), deals);
        assertThat(row(500).get("status")).isEqualTo("closing");

        deals.add(deal(4, 500, "out", "sell", "0.10", "1.1030", "3.00", T0.plusSeconds(35)));
        ReconcileResult r = apply(T0.plusSeconds(50), List.of(), deals);
        assertThat(r.closed()).isEqualTo(1);
        assertClosed(500, 4, "1.1030", "6.00", T0.plusSeconds(35));
    }

    @Test
    void theLastClosingDealIsChosenByTimeThenTicket() {
        apply(T0, List.of(position(510, "0.20", "1.1", T0)), List.of());
        Instant same = T0.plusSeconds(10);
        ReconcileResult r = apply(T0.plusSeconds(20), List.of(), List.of(
                deal(8, 510, "out", "sell", "0.10", "1.2", "1", same),
                deal(7, 510, "out", "sell", "0.10", "1.3", "1", same)));

        assertThat(r.closed()).isEqualTo(1);
        assertThat(row(510).get("close_deal_ticket")).isEqualTo(8L);
        assertThat((BigDecimal) row(510).get("close_price")).isEqualByComparingTo("1.2");
    }

    @Test
    void anInoutReversalClosesThePositionAndTheOppositeOneOpens() {
        apply(T0, List.of(position(600, "0.10", "1.1000", T0)), List.of());

        ApiPosition opposite = new ApiPosition(601, "EURUSD", "sell", new BigDecimal("0.10"), new BigDecimal("1.1050"),
                BigDecimal.ZERO, BigDecimal.ZERO, BigDecimal.ZERO, BigDecimal.ZERO, T0.plusSeconds(60));
        ReconcileResult r = apply(T0.plusSeconds(90), List.of(opposite),
                List.of(deal(11, 600, "inout", "sell", "0.20", "1.1050", "5.00", T0.plusSeconds(60))));

        assertThat(r.closed()).isEqualTo(1);
        assertThat(r.opened()).isEqualTo(1);
        assertThat(row(600).get("status")).isEqualTo("closed");
        assertThat(row(600).get("close_deal_ticket")).isEqualTo(11L);
        assertThat((BigDecimal) row(600).get("close_profit")).isEqualByComparingTo("5.00");
        assertThat(row(601).get("status")).isEqualTo("open");
    }

    @Test
    void anOutByDealClosesThePosition() {
        apply(T0, List.of(position(700, "0.10", "1.1000", T0)), List.of());

        ReconcileResult r = apply(T0.plusSeconds(90), List.of(),
                List.of(deal(12, 700, "out_by", "sell", "0.10", "1.1040", "4.00", T0.plusSeconds(80))));

        assertThat(r.closed()).isEqualTo(1);
        assertThat(row(700).get("status")).isEqualTo("closed");
        assertThat(row(700).get("close_deal_ticket")).isEqualTo(12L);
        assertThat((BigDecimal) row(700).get("close_price")).isEqualByComparingTo("1.1040");
    }

    @Test
    void closeProfitIsAnExactDecimalSum() {
        apply(T0, List.of(position(800, "0.3", "1", T0)), List.of());

        apply(T0.plusSeconds(90), List.of(), List.of(
                deal(21, 800, "out", "sell", "0.1", "1", "0.1", T0.plusSeconds(10)),
                deal(22, 800, "out", "sell", "0.1", "1", "0.2", T0.plusSeconds(20)),
                deal(23, 800, "out", "sell", "0.1", "1.00000000000000000001", "0.00000000000000000001",
                        T0.plusSeconds(30))));

        BigDecimal profit = (BigDecimal) row(800).get("close_profit");
        assertThat(profit).isEqualByComparingTo("0.30000000000000000001");
        assertThat((BigDecimal) row(800).get("close_price")).isEqualByComparingTo("1.00000000000000000001");
    }

    // ---- idempotence and ordering

    @Test
    void reconcilingTheSameStateTwiceChangesNoRow() {
        List<ApiPosition> open = List.of(position(900, "0.10", "1.08450", T0), position(901, "1", "2000", T0));
        apply(T0, List.of(position(902, "0.5", "1.3", T0), position(903, "0.5", "1.3", T0), open.get(0), open.get(1)),
                List.of());
        List<ApiDeal> deals = List.of(deal(31, 902, "out", "sell", "0.5", "1.31", "5", T0.plusSeconds(10)));
        List<Hint> hints = List.of(new Hint(904, "position.closed", T0.plusSeconds(20)));
        ReconcileResult first = reconciler.apply(ACCOUNT, T0.plusSeconds(30), open, deals, hints);
        assertThat(first.closed()).isEqualTo(1);
        assertThat(first.closing()).isEqualTo(2); // 903 lost its deal, 904 only hinted
        List<Map<String, Object>> before = table();

        ReconcileResult second = reconciler.apply(ACCOUNT, T0.plusSeconds(40), open, deals, hints);

        assertThat(second.stale()).isFalse();
        assertThat(second.changes()).isZero();
        assertThat(table()).isEqualTo(before);
    }

    @Test
    void aStaleSnapshotChangesNothing() {
        apply(T0.plusSeconds(100), List.of(position(1000, "0.10", "1.08450", T0)), List.of());
        List<Map<String, Object>> before = table();

        ReconcileResult r = apply(T0.plusSeconds(50), List.of(), List.of(
                deal(41, 1000, "out", "sell", "0.10", "1.09", "5", T0.plusSeconds(40))));

        assertThat(r.stale()).isTrue();
        assertThat(r.changes()).isZero();
        assertThat(table()).isEqualTo(before);
        assertThat(lastSnapshotAt()).isEqualTo(T0.plusSeconds(100));
    }

    @Test
    void aClosedRowIsReopenedOnlyByASnapshotTakenAfterItsCloseDeal() {
        apply(T0, List.of(position(1100, "0.10", "1.1", T0)), List.of());
        apply(T0.plusSeconds(100), List.of(), List.of(deal(51, 1100, "out", "sell", "0.10", "1.2", "1",
                T0.plusSeconds(200))));
        assertThat(row(1100).get("status")).isEqualTo("closed");

        ReconcileResult lagging = apply(T0.plusSeconds(150), List.of(position(1100, "0.10", "1.1", T0)), List.of());
        assertThat(lagging.changes()).isZero();
        assertThat(row(1100).get("status")).isEqualTo("closed");
    }

    @Test
    void aReconcileWaitsForAnotherOneOfTheSameAccountAndThenSeesItsSnapshot() throws Exception {
        reconciler.registerAccounts(List.of(ACCOUNT));
        try (Connection holder = db.getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement(
                    "select 1 from accounts where account_id = ? for update")) {
                lock.setLong(1, ACCOUNT);
                lock.executeQuery().close();
            }
            // another reconcile of the account holds it: this one must wait, not interleave
            CompletableFuture<ReconcileResult> waiting = CompletableFuture.supplyAsync(
                    () -> apply(T0, List.of(position(1400, "0.1", "1", T0)), List.of()));
            assertThatThrownBy(() -> waiting.get(300, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
            try (PreparedStatement newer = holder.prepareStatement(
                    "update accounts set last_snapshot_at = ? where account_id = ?")) {
                newer.setObject(1, OffsetDateTime.ofInstant(T0.plusSeconds(1), ZoneOffset.UTC));
                newer.setLong(2, ACCOUNT);
                newer.executeUpdate();
            }
            holder.commit();

            assertThat(waiting.get(10, TimeUnit.SECONDS).stale()).isTrue();
        }
        assertThat(count()).isZero();
    }

    @Test
    void hintsComeFromTheEventsThatNameATicket() {
        List<Hint> hints = Hint.from(List.of(
                new WebhookEvent("position.closed", ACCOUNT, T0, 7L),
                new WebhookEvent("account.connected", ACCOUNT, T0, null)));

        assertThat(hints).containsExactly(new Hint(7, "position.closed", T0));
    }

    // ---- planning

    @Test
    void dealsAreNotNeededWhenNothingVanished() {
        List<ApiPosition> open = List.of(position(1200, "0.10", "1.1", T0));
        apply(T0, open, List.of());

        DealsQuery plan = reconciler.planDeals(ACCOUNT, open,
                List.of(new Hint(1200, "position.modified", T0.plusSeconds(5))));

        assertThat(plan.needed()).isFalse();
        assertThat(plan).isEqualTo(DealsQuery.notNeeded());
        assertThat(reconciler.planDeals(ACCOUNT, List.of(), List.of()).needed()).isTrue(); // 1200 vanished
        assertThat(reconciler.planDeals(99, List.of(), List.of()).needed()).isFalse();
    }

    @Test
    void theDealsWindowStartsAtTheEarliestVanishedOpenTime() {
        apply(T0, List.of(position(1300, "0.1", "1", T0.minusSeconds(3600)), position(1301, "0.1", "1", T0),
                position(1302, "0.1", "1", T0.minusSeconds(7200))), List.of());

        DealsQuery plan = reconciler.planDeals(ACCOUNT, List.of(position(1302, "0.1", "1", T0.minusSeconds(7200))),
                List.of());

        assertThat(plan.from()).isEqualTo(T0.minusSeconds(3600).minus(AccountReconciler.OPEN_MARGIN));
        assertThat(plan.tickets()).containsExactlyInAnyOrder(1300L, 1301L);
    }

    // ---- accounts

    @Test
    void accountsAreRegisteredOnceAndFailuresRecordedWithoutTheKey() {
        reconciler.registerAccounts(List.of(5L, 3L, 5L));
        reconciler.registerAccounts(List.of(3L));
        assertThat(reconciler.knownAccounts()).containsExactly(3L, 5L);

        reconciler.recordFailure(5, "401 from https://api.metakit.dev with Authorization: Bearer mk_live_s3cr3t");
        assertThat(lastError(5)).contains("401").doesNotContain("s3cr3t");

        reconciler.apply(5, T0, List.of(), List.of(), List.of());
        assertThat(lastError(5)).isNull();
        assertThat(reconciler.knownAccounts()).containsExactly(3L, 5L);
    }

    // ---- full scan: positions never recorded

    @Test
    void aPositionOpenedAndClosedUnseenIsFoundInTheDealsAndInsertedClosedWithItsFinalDeal() {
        apply(T0, List.of(position(100, "0.10", "1.08450", T0)), List.of());
        List<ApiDeal> deals = List.of(
                deal(500, 300, "in", "buy", "0.20", "1.08000", "0.00", T0.plusSeconds(1)),
                deal(501, 300, "out", "sell", "0.05", "1.08100", "5.00", T0.plusSeconds(2)),
                deal(502, 300, "out", "sell", "0.15", "1.08200", "30.00", T0.plusSeconds(3)),
                // listed open: not a closure
                deal(503, 101, "out", "sell", "0.05", "1.08200", "1.00", T0.plusSeconds(3)),
                // already has a row
                deal(504, 100, "out", "sell", "0.05", "1.08200", "1.00", T0.plusSeconds(3)));
        List<ApiPosition> open = List.of(position(100, "0.05", "1.08450", T0), position(101, "0.10", "1.1", T0));

        List<Hint> hints = reconciler.unrecordedClosures(ACCOUNT, open, deals);

        assertThat(hints).containsExactly(new Hint(300, Hint.POSITION_CLOSED, T0.plusSeconds(3)));
        reconciler.apply(ACCOUNT, T0.plusSeconds(10), open, deals, hints);
        Map<String, Object> row = row(300);
        assertThat(row.get("status")).isEqualTo("closed");
        assertThat(row.get("close_deal_ticket")).isEqualTo(502L);
        assertThat((BigDecimal) row.get("close_profit")).isEqualByComparingTo("35.00");
        assertThat((BigDecimal) row.get("volume")).isEqualByComparingTo("0.20");
        assertThat(reconciler.unrecordedClosures(ACCOUNT, open, deals)).isEmpty();
    }

    // ---- helpers

    private ReconcileResult apply(Instant snapshotAt, List<ApiPosition> open, List<ApiDeal> deals) {
        return reconciler.apply(ACCOUNT, snapshotAt, open, deals, List.of());
    }

    private static ApiPosition position(long ticket, String volume, String priceOpen, Instant time) {
        return position(ticket, volume, priceOpen, "0", time);
    }

    private List<Map<String, Object>> table() {
        return query("select * from positions order by account_id, ticket");
    }

    /** The ticket's row is closed by that deal, at its price and time, with that profit; returns the row. */
    private Map<String, Object> assertClosed(long ticket, long dealTicket, String closePrice, String closeProfit,
                                             Instant closedAt) {
        Map<String, Object> row = row(ticket);
        assertThat(row.get("status")).isEqualTo("closed");
        assertThat(row.get("close_deal_ticket")).isEqualTo(dealTicket);
        assertThat((BigDecimal) row.get("close_price")).isEqualByComparingTo(closePrice);
        assertThat((BigDecimal) row.get("close_profit")).isEqualByComparingTo(closeProfit);
        assertThat(instant(row, "closed_at")).isEqualTo(closedAt);
        return row;
    }

    private Map<String, Object> row(long ticket) {
        List<Map<String, Object>> rows = query("select * from positions where account_id = " + ACCOUNT
                + " and ticket = " + ticket);
        assertThat(rows).hasSize(1);
        return rows.get(0);
    }

    private long count() {
        return (Long) query("select count(*) as n from positions").get(0).get("n");
    }

    private Instant lastSnapshotAt() {
        return instant(query("select last_snapshot_at from accounts where account_id = " + ACCOUNT).get(0),
                "last_snapshot_at");
    }

    private String lastError(long accountId) {
        return (String) query("select last_reconcile_error from accounts where account_id = " + accountId).get(0)
                .get("last_reconcile_error");
    }

    private static Instant instant(Map<String, Object> row, String column) {
        Object v = row.get(column);
        return v == null ? null : ((java.sql.Timestamp) v).toInstant();
    }
}
