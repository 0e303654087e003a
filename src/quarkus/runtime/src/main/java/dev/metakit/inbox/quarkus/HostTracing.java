package dev.metakit.inbox.quarkus;

import dev.metakit.inbox.worker.InboxToPositionRoutes;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.propagation.ContextPropagators;
import jakarta.enterprise.inject.Instance;
import org.apache.camel.CamelContext;
import org.apache.camel.opentelemetry2.OpenTelemetryTracer;
import org.apache.camel.spi.CamelTracingService;
import org.apache.camel.support.CamelContextHelper;

/**
 * A delivery's trace under the host's OpenTelemetry (quarkus-opentelemetry). With it, Camel's tracing
 * (camel-opentelemetry2, Camel's own module) is installed on the host's tracer, so the webhook's POST, the MetaKit calls
 * and the outlet are spans of the host's traces, and the bundle adds its own on the host's OpenTelemetry (the
 * reconcile, its links, the stored contexts); the bundle's endpoints that serve no one delivery are left out of it.
 * Without it, or with a Camel tracer of the host's own (camel-quarkus-opentelemetry2), the bundle installs nothing.
 * Camel's tracing is the CamelContext's: the host's own routes are traced too.
 */
final class HostTracing {
    private HostTracing() {
    }

    /** Installs Camel's tracing in {@code context}, before its routes are made, when the host traces and has none. */
    static void install(CamelContext context, Instance<OpenTelemetry> hostOpenTelemetry,
                        Instance<CamelTracingService> hostCamelTracer) {
        if (!hostOpenTelemetry.isResolvable() || hostCamelTracer.isResolvable()
                || context.hasService(CamelTracingService.class) != null) {
            return;
        }
        OpenTelemetry otel = hostOpenTelemetry.get();
        // what Camel's tracer and the bundle look up by type, where the host's beans do not already say it
        if (CamelContextHelper.findSingleByType(context, Tracer.class) == null) {
            context.getRegistry().bind("metakitCamelTracer", Tracer.class, otel.getTracer("camel"));
        }
        if (CamelContextHelper.findSingleByType(context, ContextPropagators.class) == null) {
            context.getRegistry().bind("metakitPropagators", ContextPropagators.class, otel.getPropagators());
        }
        OpenTelemetryTracer tracer = new OpenTelemetryTracer();
        tracer.setExcludePatterns(InboxToPositionRoutes.UNTRACED_ENDPOINTS);
        tracer.init(context);
    }
}
