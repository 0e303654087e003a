package dev.metakit.inbox.worker;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestDatabase.text;
import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The worker and the reconcile routes, in the real bundle, against a MetaKit test double over real HTTP. */
class WorkerReconcileTest {
    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();
    private final FakeMetaKit metakit = fixture.metakit();
    private RunningInbox inbox;
    private final Instant t0 = Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60);

    private void startInbox(Map<String, String> extra) {
        inbox = fixture.start(extra);
    }

    @Test
    void aCloseDeliveredBeforeItsOpenLeavesExactlyOneClosedRowWithItsDeal() throws Exception {
        metakit.account(2);
        metakit.deal(2, 500, 77, "in", "0.10", "1.08450", "0.00", t0);
        metakit.deal(2, 501, 77, "out", "0.10", "1.08650", "20.00", t0.plusSeconds(30));
        startInbox(Map.of());

        assertThat(inbox.postSigned(event("position.closed", 2, 77), "position.closed").statusCode()).isEqualTo(200);
        awaitAllProcessed();
        assertThat(inbox.postSigned(event("position.opened", 2, 77), "position.opened").statusCode()).isEqualTo(200);
        awaitAllProcessed();

        List<Map<String, Object>> rows = positions();
        assertThat(rows).hasSize(1);
        Map<String, Object> row = rows.get(0);
        assertThat(row.get("status")).isEqualTo("closed");
        assertThat(row.get("close_deal_ticket")).isEqualTo(501L);
        assertThat((BigDecimal) row.get("close_price")).isEqualByComparingTo("1.08650");
        assertThat((BigDecimal) row.get("close_profit")).isEqualByComparingTo("20.00");
    }

    @Test
    void anOpenPositionIsMirroredWithExactDecimalsAndItsCloseIsAppliedFromTheDeals() throws Exception {
        metakit.open(3, 10, "0.10", "0", "1.09000", t0);
        startInbox(Map.of());
        deliverAndAwait("position.opened", 3, 10);
        Map<String, Object> open = positions().get(0);
        assertThat(open.get("status")).isEqualTo("open");
        assertThat(open.get("volume").toString()).isEqualTo("0.10");
        assertThat((BigDecimal) open.get("sl")).isEqualByComparingTo("0");
        assertThat(open.get("tp").toString()).isEqualTo("1.09000");

        metakit.close(3, 10);
        metakit.deal(3, 900, 10, "out", "0.10", "1.08500", "5.00", t0.plusSeconds(10));
        deliverAndAwait("position.closed", 3, 10);
        assertThat(positions().get(0).get("status")).isEqualTo("closed");
        assertThat(positions().get(0).get("close_deal_ticket")).isEqualTo(900L);
    }

    @Test
    void aBurstOfOneHundredEventsForOneAccountCostsAHandfulOfApiCalls() throws Exception {
        metakit.open(4, 1, "0.10", "0", "0", t0);
        metakit.latency(20);
        startInbox(Map.of());
        // a burst: all 100 deliveries in flight at once
        ExecutorService senders = Executors.newFixedThreadPool(100);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<Future<Integer>> statuses = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            // distinct bodies, so each is its own delivery
            byte[] body = ("{\"event\":\"position.modified\",\"account_id\":4,\"data\":{\"ticket\":1,\"sl\":1.0" + i
                    + "}}").getBytes(StandardCharsets.UTF_8);
            statuses.add(senders.submit(() -> {
                go.await();
                return inbox.postSigned(body, "position.modified").statusCode();
            }));
        }
        go.countDown();
        for (Future<Integer> status : statuses) {
            assertThat(status.get()).isEqualTo(200);
        }
        senders.shutdown();
        awaitAllProcessed();
        int calls = metakit.totalCalls();
        // one reconcile serves every row of the account pending at its claim, and the doorbell waits the coalescing
        // window before it claims: so at most one reconcile per window while the burst arrives, plus the last one.
        // A loaded machine spreads "at once" over seconds; the bound follows the spread the inbox saw, not the clock
        long spreadMillis = scalar("select (extract(epoch from max(received_at) - min(received_at)) * 1000)::bigint"
                + " from webhook_inbox where account_id = 4");
        long windowMillis = Long.parseLong(inbox.camelContext()
                .resolvePropertyPlaceholders("{{metakit.worker.coalesce-millis}}"));
        long bound = 2 * (2 + spreadMillis / windowMillis);
        System.out.println("COALESCING: 100 events for one account, committed over " + spreadMillis + " ms -> " + calls
                + " MetaKit API calls (bound " + bound + ")");
        assertThat((long) calls).isLessThanOrEqualTo(Math.min(bound, 50));
    }

    @Test
    void whileTheApiAnswers500And429RowsWaitAndAreProcessedOnceItRecovers() throws Exception {
        metakit.open(5, 50, "0.20", "0", "0", t0);
        metakit.failNext(3, 500, 0);
        metakit.failNext(1, 429, 1);
        startInbox(Map.of());
        deliverAndAwait("position.opened", 5, 50);
        assertThat(positions()).singleElement().satisfies(r -> assertThat(r.get("status")).isEqualTo("open"));
        assertThat(scalar("select max(attempts) from webhook_inbox")).isGreaterThanOrEqualTo(4L);
    }

    @Test
    void aPoisonRowIsFailedAtItsFirstAttemptAndRequeueingPutsItBack() throws Exception {
        startInbox(Map.of());
        inbox.postSigned("not json at all".getBytes(StandardCharsets.UTF_8), "position.opened");
        await().atMost(Duration.ofSeconds(20)).until(() -> scalar(
                "select count(*) from webhook_inbox where failed_at is not null") == 1);
        assertThat(scalar("select attempts from webhook_inbox")).as("no retry can fix a body").isEqualTo(1L);
        assertThat(text("select last_error from webhook_inbox")).contains("not valid JSON");

        InboxWorker worker = inbox.camelContext().getRegistry().lookupByNameAndType("inboxWorker", InboxWorker.class);
        assertThat(worker.requeueFailed()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(20)).until(() -> scalar(
                "select count(*) from webhook_inbox where failed_at is not null and attempts = 1") == 1);
        // counted just after the row's update commits: the count may trail the row a moment
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(worker.deadLetteredCount(PoisonReason.NOT_JSON)).isEqualTo(2));
    }

    @Test
    void reprocessingARowWhoseProcessedMarkWasLostChangesNoPosition() throws Exception {
        metakit.open(6, 60, "0.10", "1.07000", "0", t0);
        startInbox(Map.of());
        deliverAndAwait("position.opened", 6, 60);
        List<Map<String, Object>> before = positions();

        // what a crash between the reconcile's commit and processed_at leaves behind
        exec("update webhook_inbox set processed_at = null, claimed_until = null");
        awaitAllProcessed();
        assertThat(positions()).isEqualTo(before);
    }

    @Test
    void aFailedDeliveryStatusTriggersAWarningAndAFullReconcile() throws Exception {
        metakit.open(7, 70, "0.10", "0", "0", t0);
        metakit.webhooks("[{\"id\":\"wh_1\",\"url\":\"https://x/hooks\",\"lastDeliveryStatus\":\"succeeded\","
                + "\"lastDeliveryAt\":\"" + t0 + "\"}]");
        startInbox(Map.of("metakit.status.interval", "1s", "metakit.accounts", "7"));
        await().atMost(Duration.ofSeconds(15)).until(() -> positions().size() == 1);
        int positionCallsBefore = metakit.calls("positions");

        metakit.open(7, 71, "0.10", "0", "0", t0);
        metakit.webhooks("[{\"id\":\"wh_1\",\"url\":\"https://x/hooks\",\"lastDeliveryStatus\":\"failed\","
                + "\"lastDeliveryAt\":\"" + t0.plusSeconds(5) + "\"}]");
        await().atMost(Duration.ofSeconds(15)).until(() -> positions().size() == 2);
        assertThat(metakit.calls("positions")).isGreaterThan(positionCallsBefore);
        assertThat(text("select last_delivery_status from webhook_endpoints")).isEqualTo("failed");
        assertThat(inbox.metrics()).contains("metakit_webhook_delivery_failed_total");
    }

    @Test
    void thePeriodicReconcileAloneRepairsAnAccountWhoseWebhooksWereAllLost() throws Exception {
        metakit.open(8, 80, "0.10", "0", "0", t0);
        metakit.open(8, 81, "0.30", "0", "0", t0);
        startInbox(Map.of("metakit.accounts", "8"));
        await().atMost(Duration.ofSeconds(15)).until(() -> positions().size() == 2);
        assertThat(scalar("select count(*) from reconcile_runs where finished_at is not null")).isEqualTo(1L);
    }

    @Test
    void aPositionOpenedAndClosedWhileBothItsDeliveriesWereLostGetsItsClosedRowFromThePeriodicReconcile()
            throws Exception {
        metakit.account(9);
        metakit.deal(9, 700, 90, "in", "0.10", "1.08450", "0.00", t0);
        metakit.deal(9, 701, 90, "out", "0.10", "1.08550", "10.00", t0.plusSeconds(20));
        startInbox(Map.of("metakit.accounts", "9"));
        await().atMost(Duration.ofSeconds(15)).until(() -> positions().size() == 1);
        Map<String, Object> row = positions().get(0);
        assertThat(row.get("status")).isEqualTo("closed");
        assertThat(row.get("close_deal_ticket")).isEqualTo(701L);
        assertThat(metakit.calls("deals")).isPositive();
    }

    /** Posts a signed event about one position and waits until the worker has processed every row. */
    private void deliverAndAwait(String eventType, long account, long ticket) throws Exception {
        inbox.postSigned(event(eventType, account, ticket), eventType);
        awaitAllProcessed();
    }

    private void awaitAllProcessed() {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> scalar("select count(*) from webhook_inbox where processed_at is null") == 0);
    }

    static List<Map<String, Object>> positions() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select * from positions order by account_id, ticket")) {
            List<Map<String, Object>> rows = new ArrayList<>();
            while (rs.next()) {
                Map<String, Object> row = new HashMap<>();
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                    row.put(rs.getMetaData().getColumnName(i), rs.getObject(i));
                }
                rows.add(row);
            }
            return rows;
        }
    }
}
