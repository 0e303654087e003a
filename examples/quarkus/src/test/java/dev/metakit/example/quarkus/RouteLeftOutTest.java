package dev.metakit.example.quarkus;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;

import jakarta.inject.Inject;
import javax.sql.DataSource;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Quarkus host with one of the bundle's route files left out (reconcile.camel.yaml, the periodic full reconcile:
 * the application lists the others in metakit.route-files, the extension's list of the bundle's route files) is told
 * so at startup: readiness DOWN naming the route, one ERROR line saying which and how to load it, and a signed delivery
 * answered 503 with nothing stored, never {@code 200 stored} on top of a bundle that would not repair what webhooks
 * drop. The application is booted a second time for this (a test profile), on the same embedded PostgreSQL and sandbox
 * settings as {@link QuarkusHostTest}.
 */
@QuarkusTest
@TestProfile(RouteLeftOutTest.WithoutThePeriodicReconcile.class)
class RouteLeftOutTest {
    private static final String LEFT_OUT = "metakit-reconcile-periodic";

    @Inject
    CamelContext camelContext;

    @Test
    void readinessIsDownNamingTheMissingRouteOneErrorLineSaysHowToLoadItAndADeliveryIsAnswered503() throws Exception {
        assertThat(camelContext.getRoute(LEFT_OUT)).isNull();

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            HttpResponse<String> ready = HostHttp.get("/q/health/ready");
            assertThat(ready.statusCode()).as(ready.body()).isEqualTo(503);
            assertThat(ready.body()).contains("essential-routes").contains(LEFT_OUT);
        });

        List<String> told = Files.readAllLines(WithoutThePeriodicReconcile.LOG_FILE).stream()
                .filter(line -> line.contains(" ERROR ") && line.contains("metakit-inbox is incomplete")).toList();
        assertThat(told).singleElement().asString()
                .contains("missing: " + LEFT_OUT)
                .contains("load routes/reconcile.camel.yaml (")
                .contains("Quarkus with its extension: metakit.route-files")
                .contains("METAKIT_ROUTES_REPLACED");

        HttpResponse<String> answer = HostHttp.postSigned("position.opened",
                "{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":11}}");
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
        assertThat(answer.headers().firstValue("Retry-After")).isPresent();
        DataSource inbox = camelContext.getRegistry().lookupByNameAndType("inboxDataSource", DataSource.class);
        try (Connection c = inbox.getConnection();
             ResultSet rs = c.createStatement().executeQuery("select count(*) from webhook_inbox")) {
            rs.next();
            assertThat(rs.getLong(1)).isZero();
        }
    }

    /** Every route file of the bundle but reconcile.camel.yaml; Quarkus's log also in a file the test reads. */
    public static class WithoutThePeriodicReconcile implements QuarkusTestProfile {
        /** one file per test JVM (the profile class may be loaded by more than one class loader, the pid is the same) */
        static final Path LOG_FILE = Path.of("target", "route-left-out-" + ProcessHandle.current().pid() + ".log");

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "metakit.route-files", String.join(",", "classpath:routes/beans.camel.yaml",
                            "classpath:routes/ingest.camel.yaml", "classpath:routes/worker.camel.yaml",
                            "classpath:routes/metakit-api.camel.yaml", "classpath:routes/status.camel.yaml",
                            "classpath:routes/retention.camel.yaml", "classpath:routes/ops.camel.yaml",
                            "classpath:routes/changes.camel.yaml"),
                    "quarkus.log.file.enabled", "true",
                    "quarkus.log.file.path", LOG_FILE.toString());
        }
    }
}
