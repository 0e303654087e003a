package dev.metakit.inbox.trace;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import org.apache.camel.Exchange;

/**
 * A span of the bundle's own that an exchange carries from the step that starts it to the step that ends it (steps
 * may run on other threads: the span rides on the exchange, not on a thread). While it rides, the message's
 * {@link TraceParent#HEADER} names it, so the spans Camel's tracing starts for the exchange's next endpoints (the
 * MetaKit calls) are its children.
 */
public final class ExchangeSpan {
    /** the exchange property that holds the span */
    public static final String PROPERTY = "metakitSpan";

    private ExchangeSpan() {
    }

    public static void attach(Exchange exchange, Span span) {
        exchange.setProperty(PROPERTY, span);
        exchange.getMessage().setHeader(TraceParent.HEADER, TraceParent.of(span.getSpanContext()));
    }

    /** The context of the exchange's span as traceparent text, null when it carries none. */
    public static String traceParentOf(Exchange exchange) {
        Span span = exchange.getProperty(PROPERTY, Span.class);
        return span == null ? null : TraceParent.of(span.getSpanContext());
    }

    /**
     * Makes the exchange's span current on this thread until the scope closes; with none (tracing off), makes no span
     * current, so what reads the current span (the feed's outbox) finds none rather than a stranger's.
     */
    public static Scope makeCurrent(Exchange exchange) {
        Span span = exchange.getProperty(PROPERTY, Span.class);
        return span != null ? span.makeCurrent() : Context.root().makeCurrent();
    }

    /**
     * Ends the exchange's span, if it carries one: failed with the type of the exception the route caught or holds
     * (never its message, which may quote what MetaKit answered).
     */
    public static void end(Exchange exchange) {
        Span span = exchange.getProperty(PROPERTY, Span.class);
        if (span == null) {
            return;
        }
        exchange.removeProperty(PROPERTY);
        Throwable failure = exchange.getException() != null ? exchange.getException()
                : exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        if (failure != null) {
            span.setStatus(StatusCode.ERROR);
            span.setAttribute("error.type", failure.getClass().getName());
        }
        span.end();
    }
}
