package dev.metakit.example.quarkus;

import dev.metakit.inbox.conformance.ConformanceChecks;
import dev.metakit.inbox.conformance.RuntimeOnParts;
import dev.metakit.inbox.conformance.RuntimeParts;
import dev.metakit.inbox.conformance.RuntimeUnderTest;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.apache.camel.CamelContext;

import java.net.URI;
import java.nio.file.Files;
import java.util.List;

/**
 * The bundle's conformance checks against this Quarkus host (Quarkus's Vert.x HTTP server, /q/health/ready), booted
 * once for them on a database they stop and start again, traced by Quarkus's OpenTelemetry.
 */
@QuarkusTest
@QuarkusTestResource(value = ConformanceResource.class, restrictToAnnotatedClass = true)
class QuarkusConformanceTest extends ConformanceChecks implements RuntimeOnParts {
    @Inject
    CamelContext camelContext;

    @Override
    protected RuntimeUnderTest runtime() {
        return this;
    }

    @Override
    public RuntimeParts parts() {
        return ConformanceResource.parts;
    }

    /** what the host's tracing exported (TestSpans) */
    @Inject
    InMemorySpanExporter spans;

    @Override
    public boolean traced() {
        return true;
    }

    @Override
    public List<SpanData> finishedSpans() {
        return spans.getFinishedSpanItems();
    }

    @Override
    public Readiness readiness() throws Exception {
        return Readiness.probe(URI.create("http://127.0.0.1:" + ConformanceResource.PORT + "/q/health/ready"));
    }

    @Override
    public void leaveOutRoute(String routeId) throws Exception {
        camelContext.getRouteController().stopRoute(routeId);
        camelContext.removeRoute(routeId);
    }

    @Override
    public String log() throws Exception {
        return Files.readString(ConformanceResource.LOG);
    }
}
