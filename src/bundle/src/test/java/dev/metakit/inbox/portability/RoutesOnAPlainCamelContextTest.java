package dev.metakit.inbox.portability;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.NoEnvironmentOverrides;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.apache.camel.CamelContext;
import org.apache.camel.component.direct.DirectComponent;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServerConfiguration;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.spi.Resource;
import org.apache.camel.support.PluginHelper;
import org.apache.camel.support.ResourceHelper;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bundle dropped into a host's CamelContext, the way Camel Spring Boot or Quarkus would load it: no camel-main,
 * the host's own HTTP server, our properties and beans, the route files and the bundle's Java routes (which a host
 * adds as a RouteBuilder). A signed delivery must be stored and reconciled; a host that leaves a route out is told.
 */
class RoutesOnAPlainCamelContextTest {

    @Test
    void everyRouteFileLoadsIntoAPlainCamelContextAndTheBundleWorksThere() throws Exception {
        TestDatabase.truncateAll();
        int port = RunningInbox.freePort();
        try (FakeMetaKit metakit = new FakeMetaKit(); CamelContext context = new DefaultCamelContext()) {
            metakit.open(2, 11, "0.10", "0", "0", java.time.Instant.parse("2026-12-02T10:00:00Z"));
            List<Resource> routeFiles = hostedBundle(context, port, metakit, file -> true);
            assertThat(routeFiles).extracting(Resource::getLocation)
                    .anyMatch(l -> l.endsWith("ingest.camel.yaml")).anyMatch(l -> l.endsWith("worker.camel.yaml"));
            context.addRoutes(new InboxToPositionRoutes());
            context.start();

            assertThat(context.getRoutes()).extracting(r -> r.getRouteId())
                    .contains("metakit-ingest", "metakit-worker-poll", "metakit-worker-drain", "metakit-reconcile-account",
                            "metakit-reconcile-periodic", "metakit-delivery-status-watch");
            assertThat(readiness(context)).extracting(HealthCheck.Result::getState).isEqualTo(HealthCheck.State.UP);

            HttpResponse<String> response = postDelivery(port);
            assertThat(response.statusCode()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    TestDatabase.scalar(
                            "select count(*) from positions where account_id = 2 and ticket = 11 and status = 'open'") == 1);
        }
    }

    /**
     * A host that loads the route files and forgets the bundle's RouteBuilder: the
     * bundle itself says so, with no host code.
     */
    @Test
    void aHostThatLeavesOutTheBundlesRouteBuilderIsToldItsBundleIsIncompleteAndNothingIsStored() throws Exception {
        TestDatabase.truncateAll();
        int port = RunningInbox.freePort();
        try (FakeMetaKit metakit = new FakeMetaKit(); CamelContext context = new DefaultCamelContext()) {
            hostedBundle(context, port, metakit, file -> true);
            // the periodic reconcile fires at startup into direct:full-reconcile, which this host never registered:
            // Camel's direct producer waits 30 s (its default) for a consumer, and closing the context waits for it.
            // Nothing asserted here depends on that wait; 1 s keeps the test from idling through it
            context.getComponent("direct", DirectComponent.class).setTimeout(1000);
            context.start();

            HealthCheck.Result essential = readiness(context);
            assertThat(essential.getState()).isEqualTo(HealthCheck.State.DOWN);
            assertThat(essential.getMessage()).hasValue("metakit-inbox is incomplete, missing: "
                    + "metakit-worker-doorbell, metakit-worker-drain, "
                    + "metakit-reconcile-account, metakit-reconcile-all, metakit-reconcile-requested");
            assertThat(essential.getDetails()).containsEntry("missing", "metakit-worker-doorbell,metakit-worker-drain,"
                    + "metakit-reconcile-account,metakit-reconcile-all,metakit-reconcile-requested");

            assertThat(postDelivery(port).statusCode()).isEqualTo(503);
            assertThat(TestDatabase.scalar("select count(*) from webhook_inbox")).isZero();
        }
    }

    /** The bundle's essential-routes check among the readiness checks, as a host's probe reads them (every one). */
    private static HealthCheck.Result readiness(CamelContext context) {
        return HealthCheckHelper.invokeReadiness(context, "full").stream()
                .filter(r -> r.getCheck().getId().equals("essential-routes")).findFirst().orElseThrow();
    }

    /**
     * Our properties and beans, the host's HTTP server (a Spring Boot or Quarkus application brings its own) and the
     * route files {@code files} accepts, loaded into {@code context}; the Java routes are the caller's to add.
     */
    private static List<Resource> hostedBundle(CamelContext context, int port, FakeMetaKit metakit,
                                               Predicate<Path> files) throws Exception {
        Properties overrides = new Properties();
        overrides.put("metakit.webhook.secret", RunningInbox.SECRET);
        overrides.put("metakit.database.url", TestDatabase.jdbcUrl());
        overrides.put("metakit.database.user", TestDatabase.user());
        overrides.put("metakit.database.password", TestDatabase.password() == null ? "" : TestDatabase.password());
        overrides.put("metakit.api.url", metakit.url());
        overrides.put("metakit.api.key", FakeMetaKit.API_KEY);
        overrides.put("metakit.reconcile.interval", "PT1H");
        overrides.put("metakit.status.interval", "PT1H");
        context.getPropertiesComponent().setLocation("file:" + RunningInbox.basedir().resolve("application.properties"));
        NoEnvironmentOverrides.apply(context);
        context.getPropertiesComponent().setOverrideProperties(overrides);

        VertxPlatformHttpServerConfiguration http = new VertxPlatformHttpServerConfiguration();
        http.setBindHost("127.0.0.1");
        http.setBindPort(port);
        context.addService(new VertxPlatformHttpServer(http));

        List<Resource> routeFiles;
        try (Stream<Path> list = Files.list(RunningInbox.basedir().resolve("routes"))) {
            // every file a host gets (the bundle's jar leaves out the standalone run's own beans)
            routeFiles = list.filter(p -> p.toString().endsWith(".camel.yaml"))
                    .filter(p -> !p.getFileName().toString().equals("standalone.camel.yaml")).filter(files).sorted()
                    .map(p -> ResourceHelper.resolveResource(context, "file:" + p)).toList();
        }
        PluginHelper.getRoutesLoader(context).loadRoutes(routeFiles);
        return routeFiles;
    }

    private static HttpResponse<String> postDelivery(int port) throws Exception {
        byte[] body = "{\"event\":\"position.opened\",\"account_id\":2,\"data\":{\"ticket\":11}}"
                .getBytes(StandardCharsets.UTF_8);
        return HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/hooks/metakit"))
                        .header("X-MetaKit-Signature",
                                TestSignatures.header(RunningInbox.SECRET, System.currentTimeMillis() / 1000, body))
                        .header("X-MetaKit-Event", "position.opened")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
