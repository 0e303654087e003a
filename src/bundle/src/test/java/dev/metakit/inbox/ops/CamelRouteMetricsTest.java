package dev.metakit.inbox.ops;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestEvents;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import static dev.metakit.inbox.support.Metrics.sample;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With the default settings, /observe/metrics carries Camel's own route meters for the routes off the ack path (what
 * stock Camel dashboards read) and none for the ingest route, whose answers the bundle's own meters count.
 */
class CamelRouteMetricsTest {
    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();
    private final FakeMetaKit metakit = fixture.metakit();

    @Test
    void camelsRouteMetersCoverTheWorkerAndReconcileButNotTheIngestRoute() throws Exception {
        metakit.open(2, 20, "0.10", "0", "0", Instant.now().truncatedTo(ChronoUnit.SECONDS).minusSeconds(60));
        RunningInbox inbox = fixture.start(Map.of());
        assertThat(inbox.postSigned(TestEvents.event("position.opened", 2, 20), "position.opened").body())
                .isEqualTo("stored");
        await().atMost(Duration.ofSeconds(15)).until(() ->
                scalar("select count(*) from webhook_inbox where processed_at is not null") == 1);

        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            String m = inbox.metrics();
            for (String route : List.of(InboxToPositionRoutes.DRAIN_ROUTE, InboxToPositionRoutes.RECONCILE_ACCOUNT_ROUTE)) {
                sample(m, "camel_exchanges_total{routeId=\"" + route + "\"}").isGreaterThanOrEqualTo(1.0);
                sample(m, "camel_route_policy_seconds_count{routeId=\"" + route + "\"}").isGreaterThanOrEqualTo(1.0);
            }
            sample(m, "metakit_webhook_stored_total").isEqualTo(1.0);
            assertThat(m.lines().filter(l -> l.contains("routeId=\"metakit-ingest\"")).toList())
                    .as("no Camel meter times the ingest route: the ack path is the bundle's meters' only")
                    .isEmpty();
        });
    }
}
