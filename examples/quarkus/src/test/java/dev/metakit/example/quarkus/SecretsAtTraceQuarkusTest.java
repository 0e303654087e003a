package dev.metakit.example.quarkus;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * This Quarkus host keeps every secret it gives the bundle out of its log with every category at TRACE. Not the
 * default: the log level (TRACE instead of INFO, and the minimum level built in) is what the test is about.
 */
@QuarkusTest
@TestProfile(SecretsAtTraceQuarkusTest.Trace.class)
@QuarkusTestResource(value = SecretsAtTraceQuarkusTest.TraceResource.class, restrictToAnnotatedClass = true)
class SecretsAtTraceQuarkusTest {
    static final Path LOG = Path.of("target", "quarkus-trace-" + ProcessHandle.current().pid() + ".log");
    static final String ROTATION_KEY = rotationKey();

    @Inject
    CamelContext camelContext;

    @Test
    void noSecretAppearsInAnyLogLineWithEveryCategoryAtTrace() throws Exception {
        // the periodic reconcile's first round calls MetaKit with the API key
        await().atMost(Duration.ofSeconds(60)).until(() -> ConformanceResource.sandbox.apiCalls().total() > 0);
        camelContext.stop();

        List<String> secrets = new ArrayList<>(ConformanceResource.SECRETS.all());
        secrets.add(ROTATION_KEY);
        List<String> log = Files.readAllLines(LOG);
        List<String> holding = log.stream().filter(line -> secrets.stream().anyMatch(line::contains)).toList();
        assertThat(log.stream().filter(line -> line.startsWith("TRACE")).count()).as("lines at TRACE")
                .isGreaterThan(1000);
        // the one exception (docs/architecture.md "The same promises in every runtime"): Apache HttpClient, which the
        // MetaKit API calls go through, writes every request header it sends at DEBUG, the Authorization header too
        assertThat(holding).as("log lines holding a secret, but HttpClient's request headers")
                .allSatisfy(line -> assertThat(line)
                        .matches("DEBUG +\\[org\\.apache\\.hc\\.client5\\.http\\.(headers|wire)\\] .*")
                        .contains("Authorization: Bearer " + ConformanceResource.SECRETS.apiKey()));
    }

    private static String rotationKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    /** every category at TRACE, in a file of its own with the full category names, not rotated */
    public static class Trace implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // the whole run in the one file the check reads: at TRACE the default rotation (10M, 5 backups) would
            // move the first lines, the API key's first use among them, into backups or out of the log
            return Map.of("quarkus.log.min-level", "TRACE", "quarkus.log.level", "TRACE",
                    "quarkus.log.file.format", "%-5p [%c] %s%e%n", "quarkus.log.file.path", LOG.toString(),
                    "quarkus.log.file.rotation.max-file-size", "1G");
        }
    }

    /** the conformance checks' host, the rotation key given too */
    public static class TraceResource extends ConformanceResource {
        @Override
        public Map<String, String> start() {
            Map<String, String> settings = new HashMap<>(super.start());
            settings.put("metakit.webhook.secret-key", ROTATION_KEY);
            return settings;
        }
    }
}
