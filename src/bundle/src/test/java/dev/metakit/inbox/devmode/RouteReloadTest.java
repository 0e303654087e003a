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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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

    /**
     * An integrator's route in the feed's file whose one exchange is held until the test lets it go: a reload of the
     * file waits for it (Camel's stop of a route lets its exchanges in flight finish), after it has replaced the
     * essential routes above it, as a slow outlet's call or a loaded machine keeps a reload's steps apart.
     */
    private static final String HELD_ROUTE = """

            - route:
                id: metakit-reload-held
                from:
                  uri: "timer:metakit-reload-held?delay=0&repeatCount=1"
                  steps:
                    - bean:
                        beanType: "dev.metakit.inbox.devmode.RouteReloadTest$HeldExchange"
                        method: hold
            """;
    private static final String FEED_POLL = "metakit-change-feed-poll";

    @Test
    void editingARouteFileReloadsTheRoutesAndDeliveriesAreStillStored(@TempDir Path routes) throws Exception {
        TestDatabase.truncateAll();
        RunningInbox.copyRouteFiles(routes);
        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR); RunningInbox inbox = startWatching(routes)) {
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

    /**
     * A reload that takes longer than the grace (here: the feed's poll route replaced, then the reload waiting on an
     * exchange in flight for grace + 1.5 s) is still a reload under way, not an incomplete bundle: readiness stays UP,
     * the store step never refuses, no delivery is answered 503 for it and no ERROR line is written.
     */
    @Test
    void aReloadSlowerThanTheGraceIsNoNewsWhileItIsUnderWay(@TempDir Path routes) throws Exception {
        TestDatabase.truncateAll();
        RunningInbox.copyRouteFiles(routes);
        Path feedFile = routes.resolve("changes.camel.yaml");
        Files.writeString(feedFile, HELD_ROUTE, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
        HeldExchange.reset();
        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR); RunningInbox inbox = startWatching(routes)) {
            CamelContext context = inbox.camelContext();
            EssentialRoutesCheck check = context.getRegistry().findSingleByType(EssentialRoutesCheck.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> check.refusal() == null);
            assertThat(HeldExchange.held.await(30, TimeUnit.SECONDS)).as("the held route's exchange started").isTrue();

            Files.writeString(feedFile, "# saved again\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                    .until(() -> !started(context, FEED_POLL));
            List<String> refusals = new ArrayList<>();
            List<String> answers = new ArrayList<>();
            List<Integer> readiness = new ArrayList<>();
            long until = System.nanoTime()
                    + TimeUnit.MILLISECONDS.toNanos(EssentialRoutesCheck.RUNTIME_GRACE_MILLIS + 1500);
            int n = 0;
            while (System.nanoTime() < until) {
                assertThat(HeldExchange.release.getCount()).isOne();
                String refusal = check.refusal();
                if (refusal != null) {
                    refusals.add(refusal);
                }
                var answer = inbox.postSigned(("{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{\"n\":"
                        + n++ + "}}").getBytes(StandardCharsets.UTF_8), "webhook.test");
                answers.add(answer.statusCode() + " " + answer.body());
                readiness.add(inbox.healthStatus());
            }
            // the reload was still under way all along: the poll route not back, the held exchange still in flight
            assertThat(started(context, FEED_POLL)).isFalse();
            HeldExchange.release.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> started(context, FEED_POLL)
                    && started(context, "metakit-reload-held"));

            assertThat(refusals).isEmpty();
            assertThat(answers).isNotEmpty().noneMatch(a -> a.contains("incomplete"));
            assertThat(readiness).isNotEmpty().doesNotContain(503);
            assertThat(check.refusal()).isNull();
            assertThat(errors.lines()).isEmpty();
        } finally {
            HeldExchange.release.countDown();
        }
    }

    private static RunningInbox startWatching(Path routes) {
        return RunningInbox.start(Map.of(
                "camel.main.routes-include-pattern", "file:" + routes + "/*.camel.yaml",
                "camel.main.routes-reload-enabled", "true",
                "camel.main.routes-reload-directory", routes.toString(),
                "camel.main.routes-reload-pattern", "*.camel.yaml",
                "camel.main.routes-reload-remove-all-routes", "false"));
    }

    private static boolean started(CamelContext context, String routeId) {
        var status = context.getRouteController().getRouteStatus(routeId);
        return status != null && status.isStarted();
    }

    /** The held route's bean: its one exchange waits for the test (at most 30 s, so a failing test ends). */
    public static final class HeldExchange {
        static volatile CountDownLatch held = new CountDownLatch(1);
        static volatile CountDownLatch release = new CountDownLatch(1);

        static void reset() {
            held = new CountDownLatch(1);
            release = new CountDownLatch(1);
        }

        public static void hold() throws InterruptedException {
            held.countDown();
            release.await(30, TimeUnit.SECONDS);
        }
    }
}
