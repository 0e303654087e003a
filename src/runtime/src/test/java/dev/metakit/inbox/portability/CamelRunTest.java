package dev.metakit.inbox.portability;

import dev.metakit.inbox.support.NoEnvironmentOverrides;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.apache.camel.main.KameletMain;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.StringJoiner;
import java.util.function.Predicate;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bundle on the runtime of {@code camel run application.properties routes/*.camel.yaml --dep=... --port=...}:
 * camel-kamelet-main, given the route files and the properties file the way the camel CLI hands them over (as
 * initial properties, which application.properties would override). The files listed must be the ones that run, and
 * one left off is reported by the bundle itself.
 */
class CamelRunTest {

    @Test
    void theRouteFilesListedOnTheCommandLineRunAndStoreADelivery() throws Exception {
        TestDatabase.truncateAll();
        int httpPort = RunningInbox.freePort();
        int managementPort = RunningInbox.freePort();
        KameletMain main = camelRun(httpPort, managementPort, file -> true);
        main.start();
        try {
            // the route files from the command line, and the bundle's Java routes named in application.properties
            assertThat(main.getCamelContext().getRoutes()).hasSize(15)
                    .filteredOn(route -> route.getSourceResource() == null).extracting(route -> route.getRouteId())
                    .containsExactlyInAnyOrder("metakit-worker-doorbell", "metakit-worker-drain",
                            "metakit-reconcile-account", "metakit-reconcile-all", "metakit-reconcile-requested");
            assertThat(main.getCamelContext().getRoutes()).filteredOn(route -> route.getSourceResource() != null)
                    .hasSize(10).allSatisfy(route ->
                            assertThat(route.getSourceResource().getLocation()).startsWith("file:"));

            HttpRequest request = signedDelivery(httpPort);
            HttpClient http = HttpClient.newHttpClient();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.body()).isIn("stored", "duplicate");
            });
            assertThat(TestDatabase.scalar("select count(*) from webhook_inbox")).isEqualTo(1);
        } finally {
            main.stop();
        }
    }

    /** {@code camel run} given every route file but the delivery-status watch's: readiness DOWN names it. */
    @Test
    void aRouteFileLeftOffTheCommandLineMakesReadinessDownAndNothingIsStored() throws Exception {
        TestDatabase.truncateAll();
        int httpPort = RunningInbox.freePort();
        int managementPort = RunningInbox.freePort();
        KameletMain main = camelRun(httpPort, managementPort, file -> !file.endsWith("status.camel.yaml"));
        main.start();
        try {
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest ready = HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + managementPort + "/observe/health/ready?data=true"))
                    .timeout(Duration.ofSeconds(5)).GET().build();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                HttpResponse<String> response = http.send(ready, HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).isEqualTo(503);
                assertThat(response.body()).contains("essential-routes").contains("metakit-delivery-status-watch");
            });
            assertThat(http.send(signedDelivery(httpPort), HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(503);
            assertThat(TestDatabase.scalar("select count(*) from webhook_inbox")).isZero();
        } finally {
            main.stop();
        }
    }

    /** camel-kamelet-main as the camel CLI sets it up, given the route files {@code files} accepts. */
    private static KameletMain camelRun(int httpPort, int managementPort, Predicate<Path> files) throws IOException {
        StringJoiner listed = new StringJoiner(",");
        try (Stream<Path> list = Files.list(RunningInbox.basedir().resolve("routes"))) {
            list.filter(p -> p.toString().endsWith(".camel.yaml")).filter(files).sorted()
                    .forEach(p -> listed.add("file:" + p));
        }
        KameletMain main = new KameletMain("metakit-inbox-camel-run-test");
        main.addMainListener(new NoEnvironmentOverrides());
        main.setDownload(false);
        main.addInitialProperty("camel.main.routesIncludePattern", listed.toString());
        main.addInitialProperty("camel.component.properties.location",
                "file:" + RunningInbox.basedir().resolve("application.properties"));
        main.addInitialProperty("camel.jbang.platform-http.port", String.valueOf(httpPort));
        // what the environment would say (HTTP_PORT, METAKIT_WEBHOOK_SECRET, DATABASE_URL, ...)
        RunningInbox.testSettings(httpPort, managementPort).forEach(main::addOverrideProperty);
        return main;
    }

    private static HttpRequest signedDelivery(int httpPort) {
        byte[] body = "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}".getBytes(StandardCharsets.UTF_8);
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/hooks/metakit"))
                .timeout(Duration.ofSeconds(10))
                .header("X-MetaKit-Signature",
                        TestSignatures.header(RunningInbox.SECRET, System.currentTimeMillis() / 1000, body))
                .header("X-MetaKit-Event", "webhook.test")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    }
}
