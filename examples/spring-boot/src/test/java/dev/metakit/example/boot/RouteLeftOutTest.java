package dev.metakit.example.boot;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A host that leaves one of the bundle's route files out (here the periodic full reconcile, by listing the others in
 * metakit.route-files) is told so at startup: readiness DOWN with a detail naming the missing route, never a
 * silently partial bundle.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
// the host (and the bundle in it) stops when the class ends, before its database: the database stops with the JVM
// (the embedded PostgreSQL's own shutdown hook). Stopped the other way round, the bundle's last database calls would
// each wait out Hikari's 30 s connection timeout
@DirtiesContext
class RouteLeftOutTest {
    private static final EmbeddedPostgres POSTGRES = TestParts.postgres();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        TestParts.hostDataSource(registry, POSTGRES);
        registry.add("metakit.webhook.secret", () -> "whsec_route_left_out");
        registry.add("metakit.api.url", () -> "http://127.0.0.1:9/");
        registry.add("metakit.api.key", () -> "key");
        // every route file of the bundle but reconcile.camel.yaml (route metakit-reconcile-periodic)
        registry.add("metakit.route-files", () -> String.join(",", "classpath:routes/beans.camel.yaml",
                "classpath:routes/ingest.camel.yaml", "classpath:routes/worker.camel.yaml",
                "classpath:routes/metakit-api.camel.yaml", "classpath:routes/status.camel.yaml",
                "classpath:routes/retention.camel.yaml", "classpath:routes/ops.camel.yaml",
                "classpath:routes/changes.camel.yaml"));
    }

    @Test
    void readinessIsDownNamingTheMissingRoute() {
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            HttpResponse<String> readiness = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(readiness.statusCode()).isEqualTo(503);
            assertThat(readiness.body()).contains("metakit-reconcile-periodic");
        });
    }
}
