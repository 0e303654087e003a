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
 * The Quarkus host (Camel Quarkus, JVM mode) with the bundle's extension and nothing else of the bundle's: its route
 * files and Java routes registered, a signed delivery stored on Quarkus's own HTTP server in the application's own
 * datasource, the sandbox's traffic processed and reconciled, the bundle's health checks in Quarkus's readiness and its
 * meters on Quarkus's Prometheus endpoint.
 */
@QuarkusTest
@QuarkusTestResource(BundleUnderTest.class)
class QuarkusHostTest {
    @Inject
    CamelContext camelContext;

    /** the application's default datasource (quarkus.datasource.*), Agroal's */
    @Inject
    DataSource applicationDataSource;

    @Test
    void theBundleRunsOnQuarkusStoresADeliveryAndProcessesTheSandboxsTraffic() throws Exception {
        assertThat(camelContext.getRoutes()).hasSize(15);

        HttpResponse<String> answer = HostHttp.postSigned("webhook.test",
                "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}");
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).isEqualTo("stored");

        // the bundle's tables are in the application's database: with no metakit.database.url it would otherwise run an
        // embedded PostgreSQL of its own
        assertThat(count(applicationDataSource,
                "select count(*) from information_schema.tables where table_name = 'webhook_inbox'")).isOne();
        DataSource inbox = camelContext.getRegistry().lookupByNameAndType("inboxDataSource", DataSource.class);
        assertThat(count(inbox, "select count(*) from webhook_inbox")).isOne();
        BundleUnderTest.sandbox.start();
        await().atMost(Duration.ofSeconds(60)).until(BundleUnderTest.sandbox::trafficDone);
        assertThat(BundleUnderTest.sandbox.quiesce(Duration.ofSeconds(30))).isTrue();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            assertThat(count(inbox, "select count(*) from webhook_inbox where processed_at is null")).isZero();
            assertThat(Convergence.check(BundleUnderTest.sandbox.truth(), inbox).differences()).isEmpty();
        });
        assertThat(count(inbox, "select count(*) from webhook_inbox")).isGreaterThan(1);
        assertThat(count(inbox, "select count(*) from webhook_inbox where failed_at is not null")).isZero();

        // Camel's health checks in Quarkus's readiness, the bundle's own among them (docs/quarkus.md: a healthy start)
        HttpResponse<String> ready = HostHttp.get("/q/health/ready");
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(ready.body()).contains("\"essential-routes\"", "\"inbox-database\"", "\"metakit-api-key\"",
                "\"webhook-secret\"", "\"camel-routes\"", "\"camel-consumers\"", "\"route-controller\"", "\"context\"")
                .doesNotContain("Database connections health check"); // turned off in application.properties

        // the bundle's meters and Camel's route meters on Quarkus's registry; the ack path has none of the latter
        HttpResponse<String> metrics = HostHttp.get("/q/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("metakit_inbox_rows_processed_total").contains("metakit_inbox_backlog")
                .contains("routeId=\"metakit-worker-drain\"").doesNotContain("routeId=\"metakit-ingest\"");
    }

    private static long count(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
