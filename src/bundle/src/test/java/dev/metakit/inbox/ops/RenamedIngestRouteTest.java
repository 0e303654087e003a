package dev.metakit.inbox.ops;

import dev.metakit.inbox.support.Metrics;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * docs/routes.md invites integrators to edit the route files, the ingest route's id included: the ingest meters follow the
 * webhook's path, not the route's name, so they keep counting (and Camel's own route meters still leave it out).
 */
class RenamedIngestRouteTest {

    @Test
    void theIngestMetersStillCountWhenTheIngestRouteIsRenamed(@TempDir Path routes) throws Exception {
        TestDatabase.truncateAll();
        RunningInbox.copyRouteFiles(routes);
        Path ingest = routes.resolve("ingest.camel.yaml");
        String renamed = Files.readString(ingest).replace("id: metakit-ingest\n", "id: our-webhook-intake\n");
        assertThat(renamed).contains("id: our-webhook-intake");
        Files.writeString(ingest, renamed);

        try (RunningInbox inbox = RunningInbox.start(Map.of(
                "camel.main.routes-include-pattern", "file:" + routes + "/*.camel.yaml"))) {
            assertThat(inbox.camelContext().getRoute("metakit-ingest")).isNull();
            assertThat(inbox.camelContext().getRoute("our-webhook-intake")).isNotNull();

            byte[] body = "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}".getBytes(StandardCharsets.UTF_8);
            assertThat(inbox.postSigned(body, "webhook.test").body()).isEqualTo("stored");
            assertThat(inbox.post(body, "t=1,v1=" + "0".repeat(64), "webhook.test").statusCode()).isEqualTo(400);

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                String m = inbox.metrics();
                Metrics.sample(m, "metakit_webhook_stored_total").isEqualTo(1.0);
                Metrics.sample(m, "metakit_webhook_ack_seconds_count{status=\"200\"}").isEqualTo(1.0);
                Metrics.sample(m, "metakit_webhook_rejected_total{reason=\"timestamp_outside_tolerance\"}")
                        .isEqualTo(1.0);
                // Camel's route meters leave the renamed route out too: it is told by its HTTP consumer, not its id
                Metrics.sample(m, "camel_exchanges_total{routeId=\"metakit-worker-poll\"}").isGreaterThanOrEqualTo(1.0);
                assertThat(m).doesNotContain("routeId=\"our-webhook-intake\"");
            });
        }
    }
}
