package dev.metakit.inbox.config;

import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RunningInbox}, which most tests run against, boots through {@code Application.boot}, as {@code java -jar}
 * does: what only that path applies takes effect under it too.
 */
class BootsLikeTheJarTest {

    @Test
    void aVariableAnEarlierVersionReadStopsTheStartNamingItsNewName() {
        assertThatThrownBy(() -> RunningInbox.start(RunningInbox.basedir(), Map.of("METAKIT_DB_POOL_SIZE", "4"),
                Map.of()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("METAKIT_DB_POOL_SIZE is now METAKIT_DATABASE_POOL_SIZE: rename it");
    }

    @Test
    void theRunModeChecksTheSettingsOfTheFileBesideTheJar(@TempDir Path workingDirectory) throws Exception {
        Files.writeString(workingDirectory.resolve("application.properties"), "metakit.ops.enabled = yes\n");

        assertThatThrownBy(() -> RunningInbox.start(workingDirectory, Map.of(), Map.of()))
                .hasRootCauseInstanceOf(ConfigurationException.class)
                .rootCause().hasMessage("metakit.ops.enabled (METAKIT_OPS_ENABLED) must be true or false, got 'yes'");
    }

    @Test
    void theApplicationPropertiesBesideTheJarOverridesTheJarsCopy(@TempDir Path workingDirectory) throws Exception {
        TestDatabase.truncateAll();
        Files.writeString(workingDirectory.resolve("application.properties"),
                "metakit.webhook.path = /hooks/beside-the-jar\n");

        try (RunningInbox inbox = RunningInbox.start(workingDirectory, Map.of(), Map.of())) {
            byte[] body = "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}".getBytes(StandardCharsets.UTF_8);
            assertThat(postSigned(inbox, "/hooks/beside-the-jar", body).body()).isEqualTo("stored");
            assertThat(postSigned(inbox, "/hooks/metakit", body).statusCode()).isEqualTo(404);
        }
    }

    private static HttpResponse<String> postSigned(RunningInbox inbox, String path, byte[] body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + inbox.httpPort() + path))
                .header("Content-Type", "application/json")
                .header("X-MetaKit-Event", "webhook.test")
                .header("X-MetaKit-Signature",
                        TestSignatures.header(RunningInbox.SECRET, System.currentTimeMillis() / 1000, body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    }
}
