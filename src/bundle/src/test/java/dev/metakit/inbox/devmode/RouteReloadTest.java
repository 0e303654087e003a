package dev.metakit.inbox.devmode;

import dev.metakit.inbox.ops.EssentialRoutesCheck;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.camel.CamelContext;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dev run's route reload (the settings run.sh exports): editing a route file in the watched folder replaces that
 * file's routes while the process keeps running, and the bundle still stores deliveries afterwards.
 */
class RouteReloadTest {

    private static final String PROBE_ROUTE = """

            - route:
                id: metakit-reload-probe
                from:
                  uri: "direct:reload-probe"
                  steps:
                    - setBody:
                        constant: "reloaded"
            """;

    @Test
    void editingARouteFileReloadsTheRoutesAndDeliveriesAreStillStored(@TempDir Path routes) throws Exception {
        TestDatabase.truncateAll();
        RunningInbox.copyRouteFiles(routes);
        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR); RunningInbox inbox = RunningInbox.start(Map.of(
                "camel.main.routes-include-pattern", "file:" + routes + "/*.camel.yaml",
                "camel.main.routes-reload-enabled", "true",
                "camel.main.routes-reload-directory", routes.toString(),
                "camel.main.routes-reload-pattern", "*.camel.yaml",
                "camel.main.routes-reload-remove-all-routes", "false"))) {
            CamelContext context = inbox.camelContext();
            assertThat(context.getRoute("metakit-reload-probe")).isNull();

            // worker.camel.yaml holds the poll, which keeps ringing the worker's doorbell meanwhile
            Files.writeString(routes.resolve("worker.camel.yaml"), PROBE_ROUTE, StandardCharsets.UTF_8,
                    StandardOpenOption.APPEND);

            await().atMost(Duration.ofSeconds(30)).until(() -> context.getRoute("metakit-reload-probe") != null);
            assertThat(context.createProducerTemplate().requestBody("direct:reload-probe", "", String.class))
                    .isEqualTo("reloaded");
            // the edited file's route is back, the other files' routes were left alone, and the endpoint works as before
            assertThat(context.getRoute("metakit-ingest")).isNotNull();
            assertThat(context.getRoute("metakit-worker-poll")).isNotNull();
            assertThat(context.getRoute("metakit-worker-drain")).isNotNull();
            byte[] body = "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}".getBytes(StandardCharsets.UTF_8);
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                var response = inbox.postSigned(body, "webhook.test");
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.body()).isEqualTo("stored");
            });
            // and the reloaded worker drains it
            await().atMost(Duration.ofSeconds(20)).until(() -> TestDatabase.scalar(
                    "select count(*) from webhook_inbox where processed_at is null") == 0);
            // the reload's brief gap in the worker's poll is no news: no "incomplete" ERROR line, past its grace either
            await().during(Duration.ofMillis(EssentialRoutesCheck.RUNTIME_GRACE_MILLIS + 1000))
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> errors.lines().stream().noneMatch(l -> l.contains("metakit-inbox is incomplete")));
        }
    }
}
