package dev.metakit.example.quarkus;

import dev.metakit.inbox.sandbox.Convergence;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;

import jakarta.inject.Inject;
import javax.sql.DataSource;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Quarkus host (Camel Quarkus, JVM mode) with the bundle in it: its route files and Java routes registered, a
 * signed delivery stored on Quarkus's own HTTP server, the sandbox's traffic processed and reconciled, and the bundle's
 * health checks in Quarkus's readiness.
 */
@QuarkusTest
@QuarkusTestResource(BundleUnderTest.class)
class QuarkusHostTest {
    @Inject
    CamelContext camelContext;

    @Test
    void theBundleRunsOnQuarkusStoresADeliveryAndProcessesTheSandboxsTraffic() throws Exception {
        assertThat(camelContext.getRoutes()).hasSize(15);

        HttpResponse<String> answer = HostHttp.postSigned("webhook.test",
                "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}");
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).isEqualTo("stored");

        DataSource inbox = camelContext.getRegistry().lookupByNameAndType("inboxDataSource", DataSource.class);
        BundleUnderTest.sandbox.start();
        await().atMost(Duration.ofSeconds(60)).until(BundleUnderTest.sandbox::trafficDone);
        assertThat(BundleUnderTest.sandbox.quiesce(Duration.ofSeconds(30))).isTrue();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            assertThat(count(inbox, "select count(*) from webhook_inbox where processed_at is null")).isZero();
            assertThat(Convergence.check(BundleUnderTest.sandbox.truth(), inbox).differences()).isEmpty();
        });
        assertThat(count(inbox, "select count(*) from webhook_inbox")).isGreaterThan(1);
        assertThat(count(inbox, "select count(*) from webhook_inbox where failed_at is not null")).isZero();

        // Camel's health checks in Quarkus's readiness, the bundle's own among them
        HttpResponse<String> ready = HostHttp.get("/q/health/ready");
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(ready.body()).contains("essential-routes").contains("inbox-database");
    }

    private static long count(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
