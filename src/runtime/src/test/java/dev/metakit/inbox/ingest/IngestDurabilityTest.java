package dev.metakit.inbox.ingest;

import dev.metakit.inbox.sandbox.DeliverySchedule;
import dev.metakit.inbox.support.OwnPostgresInbox;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.StoppablePostgres;
import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A database that goes away: never a 2xx for an uncommitted delivery, and recovery without a restart. */
class IngestDurabilityTest {
    @RegisterExtension
    final OwnPostgresInbox bundle = OwnPostgresInbox.withOnlyRoutes("beans", "ingest");

    @Test
    void whileTheDatabaseIsDownDeliveriesGet503FastAndTheRetryAfterRecoveryIsStored() throws Exception {
        StoppablePostgres postgres = bundle.postgres();
        RunningInbox inbox = bundle.inbox();

        byte[] body = "{\"event\":\"position.opened\",\"account_id\":9,\"data\":{\"ticket\":1}}"
                .getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        String header = TestSignatures.header(RunningInbox.SECRET, t, body);

        postgres.stop();

        HttpResponse<String> whileDown = inbox.post(body, header, "position.opened");

        assertThat(whileDown.statusCode()).isEqualTo(503);
        assertThat(whileDown.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(whileDown.body()).doesNotContain("Exception").doesNotContain("at ");
        // within MetaKit's wait, as the bundle's ack meter times it: an insert that waited for the pool's patience with
        // a server that is down (30 s) would miss it
        assertThat(inbox.slowestAnswer(503)).as("the 503's time from arrival to answer in the bundle")
                .isLessThan(DeliverySchedule.contract().requestTimeout());
        // refused again, and nothing stored (refused at once within a second of the failure: InboxWriterTest)
        assertThat(inbox.post(body, header, "position.opened").statusCode()).isEqualTo(503);
        await().atMost(Duration.ofSeconds(10)).until(() -> inbox.healthStatus() == 503);

        postgres.start();
        assertThat(countKey(t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, body)))
                .as("no key left behind by the failed attempt").isZero();

        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
                .until(() -> inbox.post(body, header, "position.opened").statusCode() == 200);
        assertThat(countKey(t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, body))).isEqualTo(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> inbox.healthStatus() == 200);
    }

    private int countKey(String key) throws Exception {
        try (Connection c = bundle.postgres().dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("select count(*) from webhook_inbox where delivery_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
