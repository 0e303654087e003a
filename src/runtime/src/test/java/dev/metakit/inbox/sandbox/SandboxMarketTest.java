package dev.metakit.inbox.sandbox;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SandboxMarketTest {
    private static final Clock FIXED = Clock.fixed(Instant.parse("2026-12-02T10:15:30Z"), ZoneOffset.UTC);

    private static List<SandboxEvent> run(long seed, int operations) {
        SandboxMarket market = new SandboxMarket(seed, 3, FIXED);
        List<SandboxEvent> events = new ArrayList<>();
        market.onEvent(events::add);
        for (int i = 0; i < operations; i++) {
            market.randomOperation();
        }
        return events;
    }

    @Test
    void two_markets_with_the_same_seed_produce_identical_operation_sequences() {
        List<SandboxEvent> first = run(42, 300);
        List<SandboxEvent> second = run(42, 300);

        assertThat(second).isEqualTo(first);
        assertThat(second.stream().map(SandboxEvent::toBytes).toList())
                .zipSatisfy(first.stream().map(SandboxEvent::toBytes).toList(),
                        (a, b) -> assertThat(Arrays.equals(a, b)).isTrue());
        assertThat(run(43, 300)).isNotEqualTo(first);
    }

    @Test
    void the_same_seed_gives_the_same_truth() {
        SandboxMarket a = new SandboxMarket(7, 4, FIXED);
        SandboxMarket b = new SandboxMarket(7, 4, FIXED);
        for (int i = 0; i < 200; i++) {
            a.randomOperation();
            b.randomOperation();
        }

        assertThat(b.truth()).isEqualTo(a.truth());
    }

    @Test
    void random_traffic_uses_every_kind_of_operation() {
        List<SandboxEvent> events = run(42, 300);

        assertThat(events).extracting(SandboxEvent::event).contains(SandboxEvent.POSITION_OPENED,
                SandboxEvent.POSITION_MODIFIED, SandboxEvent.POSITION_CLOSED, SandboxEvent.ACCOUNT_CONNECTED);
        assertThat(events).extracting(SandboxEvent::accountId).contains(1L, 2L, 3L);
    }

    @Test
    void tickets_are_unique_and_increasing_and_every_close_is_an_out_deal_with_its_position_id() {
        SandboxMarket market = new SandboxMarket(42, 3, FIXED);
        for (int i = 0; i < 300; i++) {
            market.randomOperation();
        }
        SandboxTruth truth = market.truth();

        List<Deal> deals = truth.deals().values().stream().flatMap(List::stream).toList();
        assertThat(deals).extracting(Deal::ticket).doesNotHaveDuplicates();
        assertThat(truth.closedPositions()).isNotEmpty();
        truth.closedPositions().values().forEach(closed -> {
            assertThat(closed.closingDeals()).isNotEmpty().allSatisfy(d -> {
                assertThat(d.entry()).isEqualTo("out");
                assertThat(d.positionId()).isEqualTo(closed.ticket());
            });
            assertThat(truth.openPositions(closed.accountId())).doesNotContainKey(closed.ticket());
        });
        truth.deals().forEach((account, list) -> assertThat(list).extracting(Deal::ticket).isSorted());
    }

    @Test
    void a_partial_close_reduces_the_volume_with_an_out_deal_and_a_full_close_removes_the_position() {
        SandboxMarket market = new SandboxMarket(1, 2, FIXED);
        List<SandboxEvent> events = new ArrayList<>();
        market.onEvent(events::add);

        SandboxEvent opened = market.open(2, "EURUSD", "buy", new BigDecimal("0.30"), BigDecimal.ZERO,
                BigDecimal.ZERO);
        long ticket = (long) opened.data().get("ticket");
        SandboxEvent partial = market.partialClose(ticket, new BigDecimal("0.10"));

        assertThat(partial.event()).isEqualTo(SandboxEvent.POSITION_MODIFIED);
        assertThat(partial.data().get("volume")).isEqualTo(new BigDecimal("0.20"));
        assertThat(market.positions(2)).singleElement().satisfies(p -> {
            assertThat(p.ticket()).isEqualTo(ticket);
            assertThat(p.volume()).isEqualTo(new BigDecimal("0.20"));
        });
        assertThat(market.deals(2, null, null)).extracting(Deal::entry, Deal::volume, Deal::positionId)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("in", new BigDecimal("0.30"), ticket),
                        org.assertj.core.groups.Tuple.tuple("out", new BigDecimal("0.10"), ticket));

        SandboxEvent closed = market.close(ticket);

        assertThat(closed.event()).isEqualTo(SandboxEvent.POSITION_CLOSED);
        assertThat(market.positions(2)).isEmpty();
        ClosedPosition truth = market.truth().closedPositions().get(ticket);
        assertThat(truth.closingDeals()).extracting(Deal::volume)
                .containsExactly(new BigDecimal("0.10"), new BigDecimal("0.20"));
        assertThat(truth.finalDeal().type()).isEqualTo("sell");
        assertThat(events).extracting(SandboxEvent::event).containsExactly(SandboxEvent.POSITION_OPENED,
                SandboxEvent.POSITION_MODIFIED, SandboxEvent.POSITION_CLOSED);
    }

    @Test
    void a_modify_changes_only_the_stops() {
        SandboxMarket market = new SandboxMarket(1, 1, FIXED);
        long ticket = (long) market.open(1, "GBPUSD", "sell", new BigDecimal("0.10"), BigDecimal.ZERO,
                BigDecimal.ZERO).data().get("ticket");

        SandboxEvent modified = market.modify(ticket, new BigDecimal("1.28000"), new BigDecimal("1.26000"));

        assertThat(modified.data()).containsEntry("sl", new BigDecimal("1.28000"))
                .containsEntry("tp", new BigDecimal("1.26000")).containsEntry("volume", new BigDecimal("0.10"));
        assertThat(market.truth().openPositions(1).get(ticket).sl()).isEqualTo(new BigDecimal("1.28000"));
    }

    @Test
    void an_impossible_operation_is_refused() {
        SandboxMarket market = new SandboxMarket(1, 1, FIXED);
        long ticket = (long) market.open(1, "EURUSD", "buy", new BigDecimal("0.10"), BigDecimal.ZERO,
                BigDecimal.ZERO).data().get("ticket");

        assertThatThrownBy(() -> market.partialClose(ticket, new BigDecimal("0.10")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> market.close(ticket + 1000)).hasMessageContaining("no open position");
        assertThatThrownBy(() -> market.positions(9)).hasMessageContaining("no account 9");
    }
}
