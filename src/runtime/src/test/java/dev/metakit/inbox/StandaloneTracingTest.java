package dev.metakit.inbox;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The standalone run traces only when OpenTelemetry's own settings say so. */
class StandaloneTracingTest {

    @Test
    void withoutOpenTelemetrySettingsTracingIsOff() {
        assertThat(on(Map.of())).isFalse();
        assertThat(on(Map.of("OTEL_SERVICE_NAME", "inbox", "OTEL_TRACES_SAMPLER", "always_on"))).isFalse();
    }

    @Test
    void anExporterOrAnOtlpEndpointTurnsItOn() {
        assertThat(on(Map.of("OTEL_TRACES_EXPORTER", "otlp"))).isTrue();
        assertThat(on(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"))).isTrue();
        assertThat(on(Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces"))).isTrue();
    }

    @Test
    void theExporterNoneAndTheSdkDisabledKeepItOff() {
        assertThat(on(Map.of("OTEL_TRACES_EXPORTER", "none",
                "OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"))).isFalse();
        assertThat(on(Map.of("OTEL_SDK_DISABLED", "true", "OTEL_TRACES_EXPORTER", "otlp"))).isFalse();
    }

    @Test
    void anOtlpEndpointAloneIsEnoughToBuildTheExporter() {
        // OTLP over HTTP, with the senders the run carries (the SDK's own default, gRPC, would need another)
        StandaloneTracing tracing = new StandaloneTracing(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")::get);
        try (var sdk = tracing.sdk()) {
            assertThat(sdk.getSdkTracerProvider().toString()).contains("OtlpHttpSpanExporter");
        }
    }

    private static boolean on(Map<String, String> env) {
        return new StandaloneTracing(env::get).isOn();
    }
}
