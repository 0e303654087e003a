package dev.metakit.inbox.support;

import dev.metakit.inbox.metakit.ApiDeal;
import dev.metakit.inbox.metakit.ApiPosition;
import dev.metakit.inbox.reconcile.AccountReconciler;
import dev.metakit.inbox.reconcile.Hint;
import org.junit.jupiter.api.BeforeEach;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

/**
 * The reconcile tests' common ground: one account's {@link AccountReconciler} on the test database (emptied before
 * each test), its clock an hour after {@link #T0}, MetaKit's API records with the fields a test does not care about
 * filled in, and one ticket's life that several tests start from.
 */
public abstract class ReconcileFixture {
    protected static final long ACCOUNT = 2;
    protected static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");

    /** A position.closed delivery for ticket 200, 600 s after T0. */
    protected static final Hint TICKET_200_CLOSED = new Hint(200, "position.closed", T0.plusSeconds(600));
    /** Ticket 200's whole life in the deals: 0.10 bought at 1.08450 at T0, sold at 1.08550 for 10.00 500 s later. */
    protected static final List<ApiDeal> TICKET_200_DEALS = List.of(
            deal(1, 200, "in", "buy", "0.10", "1.08450", "0", T0),
            deal(2, 200, "out", "sell", "0.10", "1.08550", "10.00", T0.plusSeconds(500)));

    protected final DataSource db = TestDatabase.dataSource();
    protected final AccountReconciler reconciler = new AccountReconciler(db, Duration.ofDays(1),
            Clock.fixed(T0.plusSeconds(3600), ZoneOffset.UTC));

    @BeforeEach
    void cleanSlate() {
        TestDatabase.truncateAll();
    }

    /** A buy of EURUSD as GET /positions lists it, profit -1.25, no tp. */
    protected static ApiPosition position(long ticket, String volume, String priceOpen, String sl, Instant time) {
        return new ApiPosition(ticket, "EURUSD", "buy", new BigDecimal(volume), new BigDecimal(priceOpen),
                new BigDecimal(sl), new BigDecimal("0"), new BigDecimal("-1.25"), new BigDecimal("0.00"), time);
    }

    /** A deal of EURUSD as GET /deals lists it, its order the ticket + 10,000, commission -0.07. */
    protected static ApiDeal deal(long ticket, long positionId, String entry, String type, String volume, String price,
                                  String profit, Instant time) {
        return new ApiDeal(ticket, positionId, ticket + 10_000, "EURUSD", type, entry, new BigDecimal(volume),
                new BigDecimal(price), new BigDecimal(profit), new BigDecimal("-0.07"), BigDecimal.ZERO, time);
    }

    protected List<Map<String, Object>> query(String sql) {
        return TestDatabase.rows(db, sql);
    }
}
