package dev.metakit.inbox.config;

import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestSignatures;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The standalone run (camel-main, its application.properties with {@code {{env:...}}} placeholders, the ops page on)
 * keeps every secret out of the log with the root logger at TRACE. This test changes the default log level (TRACE
 * instead of INFO) and turns the ops page on (so its token is read), because both are what it is about.
 */
class SecretsAtTraceStandaloneTest {

    @Test
    void noSecretAppearsInAnyLogLineOfTheStandaloneRunAtTrace() throws Exception {
        GivenSecrets secrets = GivenSecrets.random();
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        String rotationKey = Base64.getEncoder().encodeToString(key);
        List<String> all = new ArrayList<>(secrets.all());
        all.add(rotationKey);

        Level before = LogManager.getRootLogger().getLevel();
        List<String> lines;
        try (LogCapture log = LogCapture.atOrAbove(Level.ALL)) {
            Configurator.setRootLevel(Level.TRACE);
            try (RestartablePostgres postgres = new RestartablePostgres();
                 Sandbox sandbox = secrets.metakit(URI.create("http://127.0.0.1:9/hooks/metakit"))) {
                Map<String, String> settings = new LinkedHashMap<>();
                settings.put("metakit.webhook.secret", secrets.webhookSecret());
                settings.put("metakit.webhook.secret-previous", secrets.previousSecret());
                settings.put("metakit.webhook.secret-key", rotationKey);
                settings.put("metakit.api.url", sandbox.apiBaseUrl().toString());
                settings.put("metakit.api.key", secrets.apiKey());
                settings.put("metakit.ops.enabled", "true");
                settings.put("metakit.ops.token", secrets.opsToken());
                settings.put("metakit.accounts", "1");
                settings.put("metakit.database.url", postgres.jdbcUrl());
                settings.put("metakit.database.user", RestartablePostgres.USER);
                settings.put("metakit.database.password", secrets.databasePassword());
                // started, the ops page's token was read: enabled without one, startup stops
                try (RunningInbox inbox = RunningInbox.start(settings)) {
                    // a delivery signed with the current secret: verified, stored, and its account reconciled with
                    // the API key
                    byte[] body = "{\"event\":\"position.opened\",\"account_id\":1,\"data\":{\"ticket\":1}}"
                            .getBytes(StandardCharsets.UTF_8);
                    String signature = TestSignatures.header(secrets.webhookSecret(), TestSignatures.now(), body);
                    // sent again on a 503 or a timeout, as MetaKit does (at TRACE on a busy machine a commit may miss
                    // its timeout, and an answer the client's)
                    await().atMost(Duration.ofSeconds(60)).ignoreException(HttpTimeoutException.class).until(() ->
                            inbox.post(body, signature, "position.opened").statusCode() == 200);
                    await().atMost(Duration.ofSeconds(60)).until(() -> sandbox.apiCalls().total() > 0);
                }
            } finally {
                Configurator.setRootLevel(before);
            }
            lines = log.lines();
        }

        assertThat(lines.size()).as("log lines written at TRACE").isGreaterThan(1000);
        // the one exception (docs/architecture.md "The same promises in every runtime"): Apache HttpClient, which the
        // MetaKit API calls go through, writes every request header it sends at DEBUG, the Authorization header too
        assertThat(lines.stream().filter(line -> all.stream().anyMatch(line::contains)).toList())
                .as("log lines holding a secret, but HttpClient's request headers")
                .allSatisfy(line -> assertThat(line)
                        .matches("DEBUG org\\.apache\\.hc\\.client5\\.http\\.(headers|wire) - .*")
                        .contains("Authorization: Bearer " + secrets.apiKey()));
    }
}
