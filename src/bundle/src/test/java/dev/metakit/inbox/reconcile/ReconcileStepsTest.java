package dev.metakit.inbox.reconcile;

import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One account's reconcile step by step, as {@code direct:reconcile-account} runs it but in plain Java: each step
 * folds what it learned into the {@link AccountReconcile} (MetaKit's answers given as the bytes the API route
 * returns), against the real database.
 */
class ReconcileStepsTest {
    private static final long ACCOUNT = 2;
    private static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
    private static final byte[] NO_POSITIONS = json("[]");
    private static final byte[] NO_DEALS = json("[]");

    private final ReconcileSteps steps = new ReconcileSteps();

    @BeforeEach
    void cleanSlate() {
        TestDatabase.truncateAll();
        steps.setAccountReconciler(new AccountReconciler(TestDatabase.dataSource()));
        steps.setClock(Clock.fixed(T0, ZoneOffset.UTC));
    }

    @Test
    void aListedPositionIsOneCallAndBecomesAnOpenRowWithTheChangeSourceOfItsTrigger() {
        AccountReconcile r = steps.begin(AccountReconcile.forDeliveries(ACCOUNT,
                List.of(new Hint(10, "position.opened", T0)), "replay"));
        assertThat(r.snapshotAt()).isEqualTo(T0);
        assertThat(r.positionsPath()).isEqualTo("/v1/accounts/2/positions");

        r = steps.positionsReceived(r, json("[{\"ticket\":10,\"symbol\":\"EURUSD\",\"type\":\"buy\","
                + "\"volume\":0.10,\"price_open\":1.0845,\"time\":\"2026-12-02T09:59:00Z\"}]"));
        assertThat(r.dealsNeeded()).as("nothing vanished, nothing unknown: no deals call").isFalse();

        ReconcileResult result = steps.apply(r);
        assertThat(result.opened()).isEqualTo(1);
        assertThat(scalar("select count(*) from positions where ticket = 10 and status = 'open'")).isEqualTo(1L);
        assertThat(scalar("select count(*) from position_changes where ticket = 10 and source = 'replay'"))
                .isEqualTo(1L);
    }

    @Test
    void aCloseForATicketNeverSeenAsksForItsDealsAndClosesItFromThem() {
        AccountReconcile r = steps.begin(AccountReconcile.forDeliveries(ACCOUNT,
                List.of(new Hint(77, Hint.POSITION_CLOSED, T0)), AccountReconcile.EVENT));
        r = steps.positionsReceived(r, NO_POSITIONS);
        assertThat(r.dealsNeeded()).isTrue();
        // the hint's time minus the lookback (a day)
        assertThat(r.dealsPath()).isEqualTo("/v1/accounts/2/deals?from=2026-12-01T10%3A00%3A00Z");

        r = steps.dealsReceived(r, json("["
                + deal(500, 77, "in", "buy", "1.08450", "0.00", "2026-12-02T09:58:00Z") + ","
                + deal(501, 77, "out", "sell", "1.08650", "20.00", "2026-12-02T09:59:00Z") + "]"));
        ReconcileResult result = steps.apply(r);

        assertThat(result.closed()).isEqualTo(1);
        assertThat(scalar("select close_deal_ticket from positions where ticket = 77 and status = 'closed'"))
                .isEqualTo(501L);
    }

    @Test
    void aFullScanReadsTheLookbackTheFirstTimeAndThenFromItsLastCommittedScan() {
        AccountReconcile first = steps.positionsReceived(steps.begin(AccountReconcile.fullScan(ACCOUNT, "periodic")),
                NO_POSITIONS);
        assertThat(first.dealsPath()).isEqualTo("/v1/accounts/2/deals?from=2026-12-01T10%3A00%3A00Z");
        steps.apply(steps.dealsReceived(first, NO_DEALS));

        steps.setClock(Clock.fixed(T0.plusSeconds(300), ZoneOffset.UTC));
        AccountReconcile next = steps.positionsReceived(steps.begin(AccountReconcile.fullScan(ACCOUNT, "periodic")),
                NO_POSITIONS);
        // the previous scan's snapshot less a minute's margin
        assertThat(next.dealsPath()).isEqualTo("/v1/accounts/2/deals?from=2026-12-02T09%3A59%3A00Z");
    }

    private static String deal(long ticket, long position, String entry, String type, String price, String profit,
                               String time) {
        return "{\"ticket\":" + ticket + ",\"position_id\":" + position + ",\"symbol\":\"EURUSD\",\"type\":\"" + type
                + "\",\"entry\":\"" + entry + "\",\"volume\":0.10,\"price\":" + price + ",\"profit\":" + profit
                + ",\"time\":\"" + time + "\"}";
    }

    private static byte[] json(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
