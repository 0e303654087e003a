package dev.metakit.inbox.trace;

import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;

import java.util.List;

/**
 * OpenTelemetry's SDK testing exporter as an exporter the SDK's autoconfiguration knows by name: a run started with
 * {@code OTEL_TRACES_EXPORTER=}{@value #NAME} keeps its spans in memory, configured as any OTLP run is.
 */
public final class MemorySpans implements ConfigurableSpanExporterProvider {
    public static final String NAME = "metakit-test-memory";

    private static volatile InMemorySpanExporter latest;

    @Override
    public SpanExporter createExporter(ConfigProperties config) {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        latest = exporter;
        return exporter;
    }

    @Override
    public String getName() {
        return NAME;
    }

    /** The spans the latest run exported so far. */
    public static List<SpanData> exported() {
        InMemorySpanExporter exporter = latest;
        return exporter == null ? List.of() : exporter.getFinishedSpanItems();
    }
}
