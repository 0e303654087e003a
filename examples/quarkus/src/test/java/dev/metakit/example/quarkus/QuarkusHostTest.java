package dev.metakit.example.quarkus;

import dev.metakit.inbox.sandbox.Convergence;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;

import jakarta.inject.Inject;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import javax.sql.DataSource;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HexFormat;

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
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Inject
    CamelContext camelContext;

    @Test
    void theBundleRunsOnQuarkusStoresADeliveryAndProcessesTheSandboxsTraffic() throws Exception {
        assertThat(camelContext.getRoutes()).hasSize(14);

        byte[] body = "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}".getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        HttpResponse<String> answer = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + BundleUnderTest.PORT + "/hooks/metakit"))
                .header("Content-Type", "application/json")
                .header("X-MetaKit-Event", "webhook.test")
                .header("X-MetaKit-Signature", "t=" + t + ",v1=" + hmac(BundleUnderTest.SECRET, t, body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
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
        HttpResponse<String> ready = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + BundleUnderTest.PORT + "/q/health/ready")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(ready.body()).contains("essential-routes").contains("inbox-database");
    }

    private static long count(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); ResultSet rs = c.createStatement().executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String hmac(String secret, long t, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
        return HexFormat.of().formatHex(mac.doFinal(body));
    }
}
