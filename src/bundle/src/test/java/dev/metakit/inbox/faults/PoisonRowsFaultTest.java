package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxAudit;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rows no retry can fix, among an account's valid deliveries, at the default settings: each is failed at its first
 * claim (within 1 s of it) with the reason in last_error and counted by reason; the account's valid rows are
 * processed; a requeue puts them back (and they fail again the same way).
 */
class PoisonRowsFaultTest {
    private FakeMetaKit metakit;
    private RunningInbox inbox;
    private InboxAudit audit;

    @BeforeEach
    void start() {
        TestDatabase.truncateAll();
        audit = InboxAudit.install();
        metakit = new FakeMetaKit();
        metakit.open(1, 100, "0.10", "0", "0", Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60));
        inbox = RunningInbox.start(Map.of("metakit.api.url", metakit.url(), "metakit.api.key", FakeMetaKit.API_KEY));
    }

    @AfterEach
    void stop() {
        inbox.close();
        metakit.close();
        audit.close();
    }

    @Test
    void eachKindOfPoisonRowIsFailedAtItsFirstClaimWithItsReasonAndTheAccountsValidRowsAreProcessed()
            throws Exception {
        Map<String, String> poison = new LinkedHashMap<>();
        poison.put("not_json", "{\"event\":\"position.opened\",\"account_id\":1,");
        poison.put("not_object", "[{\"event\":\"position.opened\",\"account_id\":1}]");
        poison.put("no_account", "{\"event\":\"position.opened\",\"data\":{\"ticket\":100}}");
        poison.put("bad_ticket", "{\"event\":\"position.modified\",\"account_id\":1,\"data\":{\"ticket\":100.5}}");
        post("{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":100}}");
        for (String body : poison.values()) {
            post(body);
        }
        post("{\"event\":\"position.modified\",\"account_id\":1,\"data\":{\"ticket\":100,\"n\":2}}");

        await().atMost(Duration.ofSeconds(20)).until(() -> TestDatabase.scalar(
                "select count(*) from webhook_inbox where processed_at is null and failed_at is null") == 0);

        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where processed_at is not null"))
                .as("the account's valid rows").isEqualTo(2);
        assertThat(TestDatabase.scalar("select count(*) from positions where account_id = 1 and status = 'open'"))
                .isEqualTo(1);
        long slowestMillis = 0;
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("""
                     select w.last_error, w.attempts,
                            extract(epoch from w.failed_at - (select min(a.at) from test_inbox_audit a
                                                               where a.delivery_key = w.delivery_key
                                                                 and a.kind = 'claim')) * 1000,
                            (select count(*) from test_inbox_audit a
                              where a.delivery_key = w.delivery_key and a.kind = 'claim')
                       from webhook_inbox w where w.failed_at is not null""")) {
            int failed = 0;
            while (rs.next()) {
                failed++;
                String error = rs.getString(1);
                assertThat(poison.keySet()).as("a reason in %s", error).anyMatch(error::contains);
                assertThat(rs.getInt(2)).as("attempts of %s", error).isEqualTo(1);
                assertThat(rs.getInt(4)).as("claims of %s: failed at its first, never retried", error).isEqualTo(1);
                slowestMillis = Math.max(slowestMillis, (long) rs.getDouble(3));
            }
            assertThat(failed).isEqualTo(poison.size());
        }
        // the worker counts a dead-lettered row just after its update commits: the count may trail the row a moment
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            String metrics = inbox.metrics();
            for (String reason : poison.keySet()) {
                assertThat(metrics).contains("metakit_inbox_dead_lettered_total{reason=\"" + reason + "\"} 1.0");
            }
        });
        System.out.printf("FAULT poison-rows: %d kinds failed at attempt 1, slowest %d ms after its claim%n",
                poison.size(), slowestMillis);

        assertThat(inbox.camelContext().getRegistry()
                .lookupByNameAndType("inboxWorker", dev.metakit.inbox.worker.InboxWorker.class).requeueFailed())
                .isEqualTo(poison.size());
        await().atMost(Duration.ofSeconds(10)).until(() -> TestDatabase.scalar(
                "select count(*) from webhook_inbox where failed_at is not null and attempts = 1") == poison.size());
    }

    private void post(String body) throws Exception {
        assertThat(inbox.postSigned(body.getBytes(StandardCharsets.UTF_8), "position.opened").statusCode())
                .isEqualTo(200);
    }
}
