package dev.metakit.inbox.trace;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.spi.CamelTracingService;
import org.apache.camel.support.CamelContextHelper;

/**
 * Whether the bundle traces, and with which tracer: it does when Camel's own tracing runs in its CamelContext
 * (camel-opentelemetry2, which the standalone run installs when {@code OTEL_*} says so, and a host may add). Camel
 * makes the spans of the exchanges (the webhook's server span, the MetaKit calls' client spans, the outlet's); the
 * bundle adds what Camel cannot know, on the OpenTelemetry whose tracer Camel's takes (a host's, the standalone run's,
 * else the global one). Looked up once per context; when tracing is off nothing else is done.
 */
public final class CamelTracing {
    /** The instrumentation scope of the bundle's own spans. */
    public static final String SCOPE = "dev.metakit.inbox";

    private volatile CamelContext lookedUpIn;
    private volatile Tracer tracer;

    /** Whether Camel's tracing runs in {@code context}. */
    public boolean isOn(CamelContext context) {
        return tracer(context) != null;
    }

    /** The tracer of the bundle's own spans, or null when tracing is off. */
    public Tracer tracer(CamelContext context) {
        if (lookedUpIn != context) {
            Tracer t = null;
            if (context.hasService(CamelTracingService.class) != null) {
                t = openTelemetryOfCamelsTracer(context).getTracer(SCOPE);
            }
            tracer = t;
            lookedUpIn = context;
        }
        return tracer;
    }

    /**
     * The OpenTelemetry whose tracer Camel's tracing takes: with a tracer in the registry (the standalone run's, a
     * Spring Boot host's while its tracing is on), the single OpenTelemetry there; without one, the global one, as
     * Camel's tracer does then. So the bundle's spans are recorded exactly when Camel's are: a host whose tracing is
     * off (an OpenTelemetry bean but no tracer, as Spring Boot leaves it) gets none of them, and nothing is stored.
     */
    private static OpenTelemetry openTelemetryOfCamelsTracer(CamelContext context) {
        if (CamelContextHelper.findSingleByType(context, Tracer.class) != null) {
            OpenTelemetry otel = CamelContextHelper.findSingleByType(context, OpenTelemetry.class);
            if (otel != null) {
                return otel;
            }
        }
        return GlobalOpenTelemetry.get();
    }

    /**
     * The context of the span Camel's tracing last started for {@code exchange} (on the webhook's exchange: the
     * route's server span), as it writes it on the message for the next hop; null if there is none.
     */
    public static String spanOf(Exchange exchange) {
        return TraceParent.valid(exchange.getMessage().getHeader(TraceParent.HEADER, String.class));
    }
}
