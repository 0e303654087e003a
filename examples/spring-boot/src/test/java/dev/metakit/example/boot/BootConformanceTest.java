package dev.metakit.example.boot;

import dev.metakit.inbox.conformance.ConformanceChecksInHost;
import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.conformance.RuntimeParts;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.AfterAll;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.util.TestSocketUtils;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The bundle's conformance checks against this Spring Boot host (Tomcat through Camel's platform-http, Actuator's
 * readiness), booted once for them on a database they stop and start again. The database is Boot's DataSource, so
 * its password is Boot's setting.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT, properties = {
        // read before Boot's logging starts (a @DynamicPropertySource comes too late for it)
        "logging.file.name=" + BootConformanceTest.LOG_FILE,
        // not the default: Camel's health in Actuator names its checks only while one is down unless told to list
        // them all; the first check reads them from a healthy start
        "camel.health.exposure-level=full",
        // not the default (0.1): every delivery sampled, so the trace check finds the one it follows
        "management.tracing.sampling.probability=1.0"})
// the host traces, as a host with Micrometer Tracing on OpenTelemetry does (a Boot test turns tracing off unless told)
@AutoConfigureObservability(metrics = false)
// the host stops when the class ends, not at the JVM's exit
@DirtiesContext
class BootConformanceTest extends ConformanceChecksInHost {
    /** OpenTelemetry's SDK testing exporter in place of OTLP: Boot's tracing exports to every SpanExporter bean */
    private static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();

    @TestConfiguration(proxyBeanMethods = false)
    static class Spans {
        @Bean
        InMemorySpanExporter testSpanExporter() {
            return SPANS;
        }
    }

    static final String LOG_FILE = "target/boot-conformance.log";
    private static final Path LOG = fresh(Path.of(LOG_FILE));
    private static final RuntimeParts PARTS = RuntimeParts.start(GivenSecrets.random(),
            TestSocketUtils.findAvailableTcpPort());
    private static final GivenSecrets SECRETS = PARTS.secrets();

    @Autowired
    CamelContext camelContext;

    BootConformanceTest() {
        super("/actuator/health/readiness", LOG);
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("server.port", PARTS::port);
        registry.add("logging.file.name", LOG::toString);
        registry.add("spring.datasource.url", PARTS.postgres()::jdbcUrl);
        registry.add("spring.datasource.username", () -> RestartablePostgres.USER);
        registry.add("spring.datasource.password", SECRETS::databasePassword);
        registry.add("metakit.webhook.secret", SECRETS::webhookSecret);
        registry.add("metakit.webhook.secret-previous", SECRETS::previousSecret);
        registry.add("metakit.api.url", () -> PARTS.sandbox().apiBaseUrl().toString());
        registry.add("metakit.api.key", SECRETS::apiKey);
        registry.add("metakit.ops.token", SECRETS::opsToken);
        registry.add("metakit.accounts", () -> "1");
    }

    /** the log of this run only: one left by an earlier run is removed before Boot writes it again */
    private static Path fresh(Path log) {
        try {
            Files.deleteIfExists(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return log;
    }

    /**
     * The bundle first, then what it stands on: Camel stopping without its database waits out its graceful stop
     * (45 s). Spring closes the rest of the host after this class.
     */
    @AfterAll
    void stop() throws IOException {
        camelContext.stop();
        PARTS.close();
    }

    @Override
    public RuntimeParts parts() {
        return PARTS;
    }

    @Override
    public CamelContext camelContext() {
        return camelContext;
    }

    @Override
    protected List<SpanData> exportedSpans() {
        return SPANS.getFinishedSpanItems();
    }

    /**
     * Camel's stop, as Spring's SIGTERM hook runs it when it closes the context (the rest of the context is the test's
     * to close after the class).
     */
    @Override
    public boolean stopAsOnSigterm() {
        camelContext.stop();
        return true;
    }
}
