package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.support.ReconcileFixture;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Array;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** The change feed's outbox, as AccountReconciler writes it, on the real database. */
class ChangeOutboxTest extends ReconcileFixture {

    @Test
    void anOpenedPositionIsOneOpenedChangeWithItsFieldsAndTheSourceThatFoundIt() {
        reconciler.apply(ACCOUNT, T0, List.of(position(100, "0.10", "0", T0)), List.of(), List.of(), "periodic");

        List<Map<String, Object>> changes = changes();
        assertThat(changes).hasSize(1);
        Map<String, Object> c = changes.get(0);
        assertThat(c.get("seq")).isEqualTo(1L);
        assertThat(c.get("ticket")).isEqualTo(100L);
        assertThat(c.get("kind")).isEqualTo("opened");
        assertThat(c.get("status")).isEqualTo("open");
        assertThat(c.get("symbol")).isEqualTo("EURUSD");
        assertThat((BigDecimal) c.get("volume")).isEqualByComparingTo("0.10");
        assertThat((BigDecimal) c.get("price_open")).isEqualByComparingTo("1.08450");
        assertThat(((java.sql.Timestamp) c.get("opened_at")).toInstant()).isEqualTo(T0);
        assertThat(c.get("source")).isEqualTo("periodic");
        assertThat(c.get("published_at")).isNull();
        assertThat(c.get("reconciled_at")).isNotNull();
        assertThat(changed(c)).containsExactly("status", "symbol", "type", "volume", "priceOpen", "openedAt", "sl", "tp");
    }

    @Test
    void aReconcileThatChangesNothingOrOnlyTheFloatingProfitWritesNothing() {
        reconciler.apply(ACCOUNT, T0, List.of(position(100, "0.10", "0", T0)), List.of(), List.of());
        reconciler.apply(ACCOUNT, T0.plusSeconds(10), List.of(position(100, "0.1", "0", T0)), List.of(), List.of());
        ApiPosition profitMoved = new ApiPosition(100, "EURUSD", "buy", new BigDecimal("0.10"),
                new BigDecimal("1.08450"), BigDecimal.ZERO, BigDecimal.ZERO, new BigDecimal("7.5"),
                new BigDecimal("-0.3"), T0);
        ReconcileResult r = reconciler.apply(ACCOUNT, T0.plusSeconds(20), List.of(profitMoved), List.of(), List.of());

        assertThat(r.updated()).isEqualTo(1); // the positions row did move: its profit
        assertThat(changes()).hasSize(1);
        assertThat(reconciler.changesWritten()).isEqualTo(1);
    }

    @Test
    void aModifiedStopLossIsOneModifiedChangeNamingOnlyThatField() {
        reconciler.apply(ACCOUNT, T0, List.of(position(100, "0.10", "0", T0)), List.of(), List.of());
        reconciler.apply(ACCOUNT, T0.plusSeconds(10), List.of(position(100, "0.10", "1.07", T0)), List.of(), List.of(),
                "status-watch");

        List<Map<String, Object>> changes = changes();
        assertThat(changes).hasSize(2);
        Map<String, Object> c = changes.get(1);
        assertThat(c.get("seq")).isEqualTo(2L);
        assertThat(c.get("kind")).isEqualTo("modified");
        assertThat(changed(c)).containsExactly("sl");
        assertThat((BigDecimal) c.get("sl")).isEqualByComparingTo("1.07");
        assertThat((BigDecimal) c.get("volume")).isEqualByComparingTo("0.10"); // the whole position, not a diff
        assertThat(c.get("source")).isEqualTo("status-watch");
    }

    @Test
    void aVanishedPositionIsClosingThenClosedWithItsCloseFields() {
        reconciler.apply(ACCOUNT, T0, List.of(position(100, "0.10", "0", T0)), List.of(), List.of());
        reconciler.apply(ACCOUNT, T0.plusSeconds(10), List.of(), List.of(), List.of());
        reconciler.apply(ACCOUNT, T0.plusSeconds(20), List.of(), List.of(
                deal(1, 100, "in", "buy", "0.10", "1.08450", "0", T0),
                deal(2, 100, "out", "sell", "0.10", "1.08550", "10.00", T0.plusSeconds(15))), List.of());

        List<Map<String, Object>> changes = changes();
        assertThat(changes).extracting(c -> c.get("kind")).containsExactly("opened", "closing", "closed");
        assertThat(changes).extracting(c -> c.get("seq")).containsExactly(1L, 2L, 3L);
        Map<String, Object> closed = changes.get(2);
        assertThat(changed(closed)).containsExactly("status", "closedAt", "closeDealTicket", "closePrice", "profit");
        assertThat(closed.get("close_deal_ticket")).isEqualTo(2L);
        assertThat((BigDecimal) closed.get("close_price")).isEqualByComparingTo("1.08550");
        assertThat((BigDecimal) closed.get("close_profit")).isEqualByComparingTo("10.00");
    }

    @Test
    void aTicketFirstSeenClosedIsOneClosedChangeAndALateOpenWritesNothing() {
        reconciler.apply(ACCOUNT, T0.plusSeconds(700), List.of(), TICKET_200_DEALS, List.of(TICKET_200_CLOSED));
        reconciler.apply(ACCOUNT, T0.plusSeconds(800), List.of(), List.of(),
                List.of(new Hint(200, "position.opened", T0)));
        reconciler.apply(ACCOUNT, T0.plusSeconds(900), List.of(), TICKET_200_DEALS, List.of(TICKET_200_CLOSED));

        assertThat(changes()).extracting(c -> c.get("kind"), c -> c.get("seq")).containsExactly(tuple("closed", 1L));
        Map<String, Object> c = changes().get(0);
        assertThat((BigDecimal) c.get("price_open")).isEqualByComparingTo("1.08450");
        assertThat(((java.sql.Timestamp) c.get("opened_at")).toInstant()).isEqualTo(T0);
        assertThat(((java.sql.Timestamp) c.get("closed_at")).toInstant()).isEqualTo(T0.plusSeconds(500));
        assertThat((BigDecimal) c.get("close_profit")).isEqualByComparingTo("10.00");
        assertThat(changed(c)).contains("priceOpen", "openedAt", "closedAt", "closePrice", "profit");
    }

    @Test
    void aStaleSnapshotWritesNothing() {
        reconciler.apply(ACCOUNT, T0.plusSeconds(100), List.of(position(100, "0.10", "0", T0)), List.of(), List.of());
        ReconcileResult r = reconciler.apply(ACCOUNT, T0.plusSeconds(50), List.of(), List.of(
                deal(2, 100, "out", "sell", "0.10", "1.09", "5", T0.plusSeconds(40))), List.of());

        assertThat(r.stale()).isTrue();
        assertThat(changes()).hasSize(1);
    }

    @Test
    void anUnknownTriggerIsRecordedAsManual() {
        reconciler.apply(ACCOUNT, T0, List.of(position(100, "0.10", "0", T0)), List.of(), List.of(), "bench");

        assertThat(changes().get(0).get("source")).isEqualTo("manual");
    }

    @Test
    void seqsArePerAccount() {
        reconciler.apply(ACCOUNT, T0, List.of(position(100, "0.10", "0", T0)), List.of(), List.of());
        reconciler.apply(ACCOUNT + 1, T0, List.of(position(100, "0.10", "0", T0), position(101, "0.10", "0", T0)),
                List.of(), List.of());

        assertThat(query("select account_id, seq from position_changes order by account_id, seq"))
                .extracting(r -> r.get("account_id") + ":" + r.get("seq"))
                .containsExactly(ACCOUNT + ":1", (ACCOUNT + 1) + ":1", (ACCOUNT + 1) + ":2");
    }

    /**
     * Two instances (two reconcilers, separate connections) apply snapshots of one account at once, each snapshot
     * moving the stop loss: every applied transition is one change, seqs run 1..n without gap or repeat, and the
     * last change of the ticket describes its positions row.
     */
    @Test
    void twoInstancesReconcilingOneAccountAtOnceWriteEachTransitionOnceWithGaplessSeqs() throws Exception {
        AccountReconciler other = new AccountReconciler(db, Duration.ofDays(1),
                Clock.fixed(T0.plusSeconds(3600), ZoneOffset.UTC));
        int rounds = 60;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            CyclicBarrier together = new CyclicBarrier(4);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                AccountReconciler instance = t % 2 == 0 ? reconciler : other;
                int thread = t;
                done.add(pool.submit((Callable<Void>) () -> {
                    together.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < rounds; i++) {
                        int step = i * 4 + thread;
                        // snapshots of increasing time with a stop loss that says which snapshot it is
                        instance.apply(ACCOUNT, T0.plusMillis(step), List.of(
                                position(100, "0.10", "1." + (1000 + step), T0),
                                position(101, "0.20", String.valueOf(step % 3), T0)), List.of(), List.of());
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        List<Map<String, Object>> changes = changes();
        long n = changes.size();
        assertThat(changes).extracting(c -> (Long) c.get("seq")).containsExactlyElementsOf(
                LongStream.rangeClosed(1, n).boxed().toList());
        assertThat(n).isEqualTo(reconciler.changesWritten() + other.changesWritten());
        // consecutive changes of one ticket always differ: none is a repeat of the transition before it
        Map<Long, BigDecimal> lastSl = new LinkedHashMap<>();
        for (Map<String, Object> c : changes) {
            BigDecimal sl = (BigDecimal) c.get("sl");
            BigDecimal before = lastSl.put((Long) c.get("ticket"), sl);
            assertThat(before == null || before.compareTo(sl) != 0).as("change %s repeats its ticket's last", c.get("seq"))
                    .isTrue();
        }
        for (long ticket : List.of(100L, 101L)) {
            BigDecimal inTable = (BigDecimal) query("select sl from positions where ticket = " + ticket).get(0).get("sl");
            assertThat(lastSl.get(ticket)).isEqualByComparingTo(inTable);
        }
        assertThat(query("select last_seq from position_change_seqs where account_id = " + ACCOUNT).get(0)
                .get("last_seq")).isEqualTo(n);
    }

    // ---- helpers

    private static ApiPosition position(long ticket, String volume, String sl, Instant time) {
        return position(ticket, volume, "1.08450", sl, time);
    }

    private List<Map<String, Object>> changes() {
        return query("select * from position_changes where account_id = " + ACCOUNT + " order by seq");
    }

    private static List<String> changed(Map<String, Object> change) {
        try {
            return Arrays.asList((String[]) ((Array) change.get("changed")).getArray());
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
