package dev.metakit.inbox.portability;

import dev.metakit.inbox.reconcile.ReconcileRoutes;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.NoEnvironmentOverrides;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import dev.metakit.inbox.worker.WorkerRoutes;
import org.apache.camel.CamelContext;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServerConfiguration;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.spi.Resource;
import org.apache.camel.support.PluginHelper;
import org.apache.camel.support.ResourceHelper;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
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
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bundle dropped into a host's CamelContext, the way Camel Spring Boot or Quarkus would load it: no camel-main,
 * the host's own HTTP server, our properties and beans, the route files and the bundle's Java routes (which a host
 * adds as RouteBuilders). A signed delivery must be stored and reconciled.
 */
class RoutesOnAPlainCamelContextTest {

    @Test
    void everyRouteFileLoadsIntoAPlainCamelContextAndTheBundleWorksThere() throws Exception {
        TestDatabase.truncateAll();
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (FakeMetaKit metakit = new FakeMetaKit(); CamelContext context = new DefaultCamelContext()) {
            metakit.open(2, 11, "0.10", "0", "0", java.time.Instant.parse("2026-12-02T10:00:00Z"));
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

            // the host's HTTP server (a Spring Boot or Quarkus application brings its own)
            VertxPlatformHttpServerConfiguration http = new VertxPlatformHttpServerConfiguration();
            http.setBindHost("127.0.0.1");
            http.setBindPort(port);
            context.addService(new VertxPlatformHttpServer(http));

            List<Resource> routeFiles;
            try (Stream<Path> files = Files.list(RunningInbox.basedir().resolve("routes"))) {
                // every file a host gets (the bundle's jar leaves out the standalone run's own beans)
                routeFiles = files.filter(p -> p.toString().endsWith(".camel.yaml"))
                        .filter(p -> !p.getFileName().toString().equals("standalone.camel.yaml")).sorted()
                        .map(p -> ResourceHelper.resolveResource(context, "file:" + p)).toList();
            }
            assertThat(routeFiles).extracting(Resource::getLocation)
                    .anyMatch(l -> l.endsWith("ingest.camel.yaml")).anyMatch(l -> l.endsWith("worker.camel.yaml"));
            PluginHelper.getRoutesLoader(context).loadRoutes(routeFiles);
            context.addRoutes(new WorkerRoutes());
            context.addRoutes(new ReconcileRoutes());
            context.start();

            assertThat(context.getRoutes()).extracting(r -> r.getRouteId())
                    .contains("metakit-ingest", "metakit-worker-poll", "metakit-worker-drain", "metakit-reconcile-account",
                            "metakit-reconcile-periodic", "metakit-delivery-status-watch");

            byte[] body = "{\"event\":\"position.opened\",\"account_id\":2,\"data\":{\"ticket\":11}}"
                    .getBytes(StandardCharsets.UTF_8);
            HttpResponse<String> response = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/hooks/metakit"))
                            .header("X-MetaKit-Signature",
                                    TestSignatures.header(RunningInbox.SECRET, System.currentTimeMillis() / 1000, body))
                            .header("X-MetaKit-Event", "position.opened")
                            .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    TestDatabase.scalar(
                            "select count(*) from positions where account_id = 2 and ticket = 11 and status = 'open'") == 1);
        }
    }
}
