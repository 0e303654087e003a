package dev.metakit.inbox;

import dev.metakit.inbox.worker.InboxToPositionRoutes;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import org.apache.camel.CamelContext;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.MainListenerSupport;
import org.apache.camel.spi.CamelTracingService;
import org.apache.camel.spi.PropertiesComponent;
import org.apache.camel.spi.Registry;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

/**
 * Tracing of the standalone run, configured by OpenTelemetry's own variables ({@code OTEL_*}, or the {@code otel.*}
 * system properties), read by the SDK's autoconfiguration. Off unless configured: on when
 * {@code OTEL_TRACES_EXPORTER} names an exporter other than {@code none}, or {@code OTEL_EXPORTER_OTLP_ENDPOINT} or
 * {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} is set (the exporter is then OTLP), and {@code OTEL_SDK_DISABLED} is not
 * {@code true}. Off, nothing is created: no SDK, no Camel tracer, and the bundle stores and sends no trace context.
 *
 * <p>On, the SDK is this run's own (in Camel's registry, not the JVM-global one), Camel's tracing
 * (camel-opentelemetry2, {@code camel.opentelemetry2.*}, {@link ExcludingOnceTracer}) makes the exchanges' spans with
 * it, leaving out the endpoints that serve no one delivery ({@link InboxToPositionRoutes#UNTRACED_ENDPOINTS}, unless
 * {@code camel.opentelemetry2.exclude-patterns} says otherwise), and the bundle adds its own spans. Traces only:
 * metrics stay on /observe/metrics and logs on the console unless {@code OTEL_METRICS_EXPORTER} or
 * {@code OTEL_LOGS_EXPORTER} says otherwise. OTLP goes over HTTP ({@code http/protobuf}) unless
 * {@code OTEL_EXPORTER_OTLP_PROTOCOL} says otherwise. The service name is {@code metakit-inbox} unless
 * {@code OTEL_SERVICE_NAME} says otherwise. The spans still buffered are exported when the run stops.
 */
final class StandaloneTracing extends MainListenerSupport {
    /**
     * The variables read through the run's environment (the process's under java -jar; the tests give theirs this
     * way): those that turn tracing on or off, and those that shape the spans. The SDK reads every other
     * {@code OTEL_*} (the exporter's headers, protocol, timeouts, the batch processor) from the process itself.
     */
    private static final String[] KNOWN_VARIABLES = {"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER",
            "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME",
            "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_RESOURCE_ATTRIBUTES"};

    /** OTLP over HTTP (the SDK's own default is gRPC, whose sender the run does not carry) */
    private static final Map<String, String> DEFAULTS = Map.of(
            "otel.exporter.otlp.protocol", "http/protobuf",
            "otel.service.name", "metakit-inbox",
            "otel.metrics.exporter", "none",
            "otel.logs.exporter", "none");

    private final Map<String, String> settings;
    private OpenTelemetrySdk sdk;

    StandaloneTracing(Function<String, String> env) {
        this.settings = settings(env);
    }

    /** Whether OpenTelemetry's settings turn tracing on, as the class comment says. */
    boolean isOn() {
        if ("true".equalsIgnoreCase(settings.getOrDefault("otel.sdk.disabled", "").trim())) {
            return false;
        }
        String exporter = settings.getOrDefault("otel.traces.exporter", "").trim();
        if (!exporter.isEmpty()) {
            return !exporter.equalsIgnoreCase("none");
        }
        return settings.containsKey("otel.exporter.otlp.endpoint")
                || settings.containsKey("otel.exporter.otlp.traces.endpoint");
    }

    @Override
    public void beforeConfigure(BaseMainSupport main) {
        if (!isOn()) {
            return;
        }
        sdk = sdk();
        CamelContext context = main.getCamelContext();
        Registry registry = context.getRegistry();
        // what Camel's tracer and the bundle look up by type (the only one of each in the registry)
        registry.bind("metakitOpenTelemetry", OpenTelemetry.class, sdk);
        registry.bind("metakitTracer", Tracer.class, sdk.getTracer("camel"));
        registry.bind("metakitPropagators", ContextPropagators.class, sdk.getPropagators());
        // the tracer camel-main configures from camel.opentelemetry2.* (it takes the one in the registry)
        registry.bind("metakitCamelTracer", CamelTracingService.class, new ExcludingOnceTracer());
        // initial properties: application.properties and the environment may still set camel.opentelemetry2.*
        PropertiesComponent properties = context.getPropertiesComponent();
        properties.addInitialProperty("camel.opentelemetry2.enabled", "true");
        properties.addInitialProperty("camel.opentelemetry2.exclude-patterns",
                InboxToPositionRoutes.UNTRACED_ENDPOINTS);
    }

    /** The SDK these settings configure, closed by the caller. */
    OpenTelemetrySdk sdk() {
        return AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> DEFAULTS)
                .addPropertiesSupplier(() -> settings)
                // closed when the run stops (afterStop), not by a JVM hook of its own
                .disableShutdownHook()
                .build()
                .getOpenTelemetrySdk();
    }

    @Override
    public void afterStop(BaseMainSupport main) {
        if (sdk != null) {
            sdk.close();
            sdk = null;
        }
    }

    /**
     * OpenTelemetry's settings in this run's environment, as {@code otel.*} keys (the SDK reads the process's
     * environment and system properties itself too, over these; the tests give theirs this way), then the
     * {@code otel.*} system properties over them.
     */
    private static Map<String, String> settings(Function<String, String> env) {
        Map<String, String> s = new LinkedHashMap<>();
        for (String variable : KNOWN_VARIABLES) {
            String value = env.apply(variable);
            if (value != null && !value.isBlank()) {
                s.put(variable.toLowerCase(Locale.ROOT).replace('_', '.'), value);
            }
        }
        Properties system = System.getProperties();
        for (String key : system.stringPropertyNames()) {
            if (key.startsWith("otel.")) {
                s.put(key, system.getProperty(key));
            }
        }
        return s;
    }
}
