package dev.metakit.example.quarkus;

import dev.metakit.inbox.conformance.ConformanceChecksInHost;
import dev.metakit.inbox.conformance.RuntimeParts;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.camel.CamelContext;

import java.util.List;

/**
 * The bundle's conformance checks against this Quarkus host (Quarkus's Vert.x HTTP server, /q/health/ready), booted
 * once for them on a database they stop and start again, traced by Quarkus's OpenTelemetry.
 */
@QuarkusTest
@QuarkusTestResource(value = ConformanceResource.class, restrictToAnnotatedClass = true)
class QuarkusConformanceTest extends ConformanceChecksInHost {
    @Inject
    CamelContext camelContext;

    QuarkusConformanceTest() {
        super("/q/health/ready", ConformanceResource.LOG);
    }

    @Override
    public RuntimeParts parts() {
        return ConformanceResource.parts;
    }

    /** what the host's tracing exported (TestSpans) */
    @Inject
    InMemorySpanExporter spans;

    @Override
    public CamelContext camelContext() {
        return camelContext;
    }

    @Override
    protected List<SpanData> exportedSpans() {
        return spans.getFinishedSpanItems();
    }
}
