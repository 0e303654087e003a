package dev.metakit.inbox.conformance.plain;

import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RuntimeParts;
import dev.metakit.inbox.support.LogCapture;
import org.apache.camel.CamelContext;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bundle's secrets stay out of the log with every logger at TRACE (a host that turns on DEBUG to chase something):
 * Camel's property resolution, bean binding, the HTTP client's header logging and the bundle's own lines included.
 * This test changes the default log level, TRACE instead of the host's INFO, because that is what it is about.
 */
class SecretsAtTraceTest {

    @Test
    void noSecretAppearsInAnyLogLineWithTheRootLoggerAtTrace() throws Exception {
        GivenSecrets secrets = GivenSecrets.random();
        String rotationKey = rotationKey();
        List<String> all = new ArrayList<>(secrets.all());
        all.add(rotationKey);

        Level before = LogManager.getRootLogger().getLevel();
        LogCapture lines = LogCapture.keeping(Level.ALL, line -> all.stream().anyMatch(line::contains));
        Configurator.setRootLevel(Level.TRACE);
        try (RuntimeParts parts = RuntimeParts.start(secrets)) {
            Properties settings = new Properties();
            settings.putAll(parts.settings());
            settings.put("metakit.webhook.secret-key", rotationKey);
            CamelContext context = PlainCamelHost.start(
                    Path.of(System.getProperty("metakit.test.basedir", "../..")), parts.port(), settings);
            try {
                // the periodic reconcile's first round calls MetaKit with the API key in its Authorization header
                await().atMost(Duration.ofSeconds(60)).until(() -> parts.sandbox().apiCalls().total() > 0);
            } finally {
                context.close();
            }
        } finally {
            Configurator.setRootLevel(before);
            lines.close();
        }

        assertThat(lines.seen()).as("log lines written at TRACE").isGreaterThan(1000);
        // the one exception (docs/architecture.md "The same promises in every runtime"): Apache HttpClient, which the
        // MetaKit API calls go through, writes every request header it sends at DEBUG, the Authorization header too
        assertThat(lines.lines()).as("log lines holding a secret, but HttpClient's request headers")
                .allSatisfy(line -> assertThat(line)
                        .matches("DEBUG org\\.apache\\.hc\\.client5\\.http\\.(headers|wire) - .*")
                        .contains("Authorization: Bearer " + secrets.apiKey()));
    }

    private static String rotationKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }
}
