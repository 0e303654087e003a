package dev.metakit.inbox.ops;

import dev.metakit.inbox.support.OwnPostgresInbox;
import dev.metakit.inbox.support.StoppablePostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A platform restarts what fails liveness and stops routing to what fails readiness: a database outage must do the
 * second only, and readiness must come back by itself.
 */
class HealthProbesTest {
    @RegisterExtension
    final OwnPostgresInbox bundle = OwnPostgresInbox.withOnlyRoutes("beans", "ingest", "worker");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void whileTheDatabaseIsDownLivenessStaysUpAndReadinessGoesDownUntilItIsBack() throws Exception {
        StoppablePostgres postgres = bundle.postgres();
        assertThat(status("/observe/health/live")).isEqualTo(200);
        assertThat(status("/observe/health/ready")).isEqualTo(200);

        postgres.stop();

        await().atMost(Duration.ofSeconds(15)).until(() -> status("/observe/health/ready") == 503);
        HttpResponse<String> ready = get("/observe/health/ready");
        assertThat(ready.body()).contains("DOWN");
        HttpResponse<String> live = get("/observe/health/live");
        assertThat(live.statusCode()).as(live.body()).isEqualTo(200);
        assertThat(live.body()).contains("UP").doesNotContain("DOWN");

        postgres.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> status("/observe/health/ready") == 200);
        assertThat(status("/observe/health/live")).isEqualTo(200);
    }

    private int status(String path) {
        try {
            return get(path).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(bundle.inbox().managementUri(path)).timeout(Duration.ofSeconds(5))
                        .GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
