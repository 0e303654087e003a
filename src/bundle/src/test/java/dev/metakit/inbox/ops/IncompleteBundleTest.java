package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The standalone run (camel-main, booted as {@code java -jar} boots it) with a route the bundle's guarantees rest on
 * left out or stopped: readiness DOWN naming it, one ERROR line saying how to register it, and no delivery stored
 * (503, so MetaKit retries) rather than {@code 200 stored} with nothing to work it.
 */
class IncompleteBundleTest {
    /** every route file but the change feed's */
    private static final String ALL_BUT_THE_FEED = RunningInbox.onlyRoutes(
            "beans", "ingest", "metakit-api", "worker", "reconcile", "status", "retention", "ops");

    private static final byte[] DELIVERY = "{\"event\":\"position.opened\",\"account_id\":2,\"data\":{\"ticket\":11}}"
            .getBytes(StandardCharsets.UTF_8);

    @BeforeEach
    void cleanInbox() {
        TestDatabase.truncateAll();
    }

    @Test
    void withoutTheBundlesRouteBuilderTheBundleIsNotReadySaysHowToRegisterItAndStoresNothing() throws Exception {
        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR);
             // a host that loaded the route files but never registered the bundle's Java routes
             RunningInbox inbox = RunningInbox.startUnready(Map.of(
                     "camel.main.routes-builder-classes", RunningInbox.NoJavaRoutes.class.getName(),
                     // the periodic reconcile fires at startup into direct:full-reconcile, which has no consumer
                     // here: Camel's direct producer would wait 30 s (its default) for one and the stop would wait
                     // for it. Nothing asserted here depends on that wait
                     "camel.component.direct.timeout", "1000"))) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                HttpResponse<String> ready = inbox.management("/observe/health/ready?data=true");
                assertThat(ready.statusCode()).as(ready.body()).isEqualTo(503);
                assertThat(ready.body()).contains("essential-routes")
                        .contains("metakit-worker-doorbell").contains("metakit-worker-drain")
                        .contains("metakit-reconcile-account");
            });
            List<String> lines = errors.lines().stream().filter(l -> l.contains("metakit-inbox is incomplete")).toList();
            assertThat(lines).hasSize(1);
            assertThat(lines.get(0)).contains("missing: metakit-worker-doorbell, metakit-worker-drain, "
                            + "metakit-reconcile-account, metakit-reconcile-all, metakit-reconcile-requested")
                    .contains("camel.main.routes-builder-classes").contains("METAKIT_ROUTES_REPLACED")
                    // the five routes come from one RouteBuilder, named once; every route file was loaded
                    .doesNotContain("load routes/");
            assertThat(lines.get(0).split("register the RouteBuilder dev.metakit.inbox.worker.InboxToPositionRoutes",
                    -1)).hasSize(2);

            HttpResponse<String> answer = inbox.postSigned(DELIVERY, "position.opened");
            assertThat(answer.statusCode()).isEqualTo(503);
            assertThat(answer.headers().firstValue("Retry-After")).isPresent();
            assertThat(TestDatabase.scalar("select count(*) from webhook_inbox")).isZero();
        }
    }

    @Test
    void aRouteStoppedWhileRunningTurnsReadinessDownUntilItRunsAgain() throws Exception {
        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR); RunningInbox inbox = RunningInbox.start()) {
            String periodic = EssentialRoute.PERIODIC_RECONCILE.routeId();
            inbox.camelContext().getRouteController().stopRoute(periodic);

            // after a grace (a reload's brief gap is no news): readiness, then the one ERROR line
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                HttpResponse<String> ready = inbox.management("/observe/health/ready?data=true");
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("stopped").contains(periodic);
            });
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    errors.lines().stream().anyMatch(l -> l.contains("metakit-inbox is incomplete")));
            assertThat(errors.lines()).filteredOn(l -> l.contains("metakit-inbox is incomplete"))
                    .singleElement().asString().contains("stopped: " + periodic)
                    .contains("start the stopped ones again");
            assertThat(inbox.postSigned(DELIVERY, "position.opened").statusCode()).isEqualTo(503);
            assertThat(TestDatabase.scalar("select count(*) from webhook_inbox")).isZero();

            inbox.camelContext().getRouteController().startRoute(periodic);
            assertThat(inbox.management("/observe/health/ready").statusCode()).isEqualTo(200);
            HttpResponse<String> stored = inbox.postSigned(DELIVERY, "position.opened");
            assertThat(stored.statusCode()).isEqualTo(200);
            assertThat(stored.body()).isEqualTo("stored");
        }
    }

    @Test
    void aRouteFileLeftOutOnPurposeIsNamedInTheSettingAndTheBundleIsReady() throws Exception {
        // every route file but the change feed's, which this deployment does without
        try (RunningInbox inbox = RunningInbox.start(Map.of(
                "camel.main.routes-include-pattern", ALL_BUT_THE_FEED,
                "metakit.routes.replaced", "metakit-change-feed-poll, metakit-change-outlet"))) {
            assertThat(inbox.camelContext().getRoute(EssentialRoute.FEED_POLL.routeId())).isNull();
            assertThat(inbox.management("/observe/health/ready").statusCode()).isEqualTo(200);
            assertThat(inbox.postSigned(DELIVERY, "position.opened").body()).isEqualTo("stored");
        }
    }

    @Test
    void theSameRouteFilesLeftOutWithoutTheSettingAreNotReady() throws Exception {
        try (RunningInbox inbox = RunningInbox.startUnready(Map.of(
                "camel.main.routes-include-pattern", ALL_BUT_THE_FEED,
                "metakit.routes.replaced", ""))) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                HttpResponse<String> ready = inbox.management("/observe/health/ready?data=true");
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("metakit-change-feed-poll").contains("metakit-change-outlet");
            });
            assertThat(inbox.postSigned(DELIVERY, "position.opened").statusCode()).isEqualTo(503);
        }
    }

    @Test
    void aRouteIdTheBundleDoesNotHaveInTheSettingStopsStartupNamingIt() {
        assertThatThrownBy(() -> RunningInbox.start(Map.of("metakit.routes.replaced", "metakit-reconcile-nightly")))
                .rootCause().isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("metakit.routes.replaced names metakit-reconcile-nightly, which is not one of"
                        + " the bundle's essential routes (metakit-ingest, ");
    }
}
