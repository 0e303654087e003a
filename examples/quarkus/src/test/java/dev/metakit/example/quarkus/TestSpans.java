package dev.metakit.example.quarkus;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** OpenTelemetry's SDK testing exporter as the host's span exporter: Quarkus's OpenTelemetry exports to its beans. */
@ApplicationScoped
public class TestSpans {
    @Produces
    @Singleton
    InMemorySpanExporter spans() {
        return InMemorySpanExporter.create();
    }
}
