package dev.metakit.inbox.trace;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;

import java.util.List;

/**
 * A span's context as W3C Trace Context's {@code traceparent} text: what the inbox keeps with a delivery, the feed's
 * outbox with a change, and the feed sends downstream in the header of that name.
 */
public final class TraceParent {
    /**
     * The header a change goes to its outlet with, and the one Camel's tracing reads and writes on an exchange: the
     * outlet's transport carries it on (a Kafka header, an HTTP header, a JMS property).
     */
    public static final String HEADER = "traceparent";

    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    private static final TextMapGetter<String> ONE_VALUE = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String carrier) {
            return List.of(HEADER);
        }

        @Override
        public String get(String carrier, String key) {
            return HEADER.equals(key) ? carrier : null;
        }
    };

    private TraceParent() {
    }

    /** The text of {@code context}, or null for an invalid (no-op, unsampled-and-unset) one. */
    public static String of(SpanContext context) {
        if (context == null || !context.isValid()) {
            return null;
        }
        String[] text = new String[1];
        W3C.inject(Context.root().with(Span.wrap(context)), text, (carrier, key, value) -> {
            if (HEADER.equals(key)) {
                carrier[0] = value;
            }
        });
        return text[0];
    }

    /** The text of the span current on this thread, or null when there is none. */
    public static String ofCurrentSpan() {
        return of(Span.current().getSpanContext());
    }

    /** The context {@code text} names (remote), or an invalid one for null or text that is no traceparent. */
    public static SpanContext parse(String text) {
        if (text == null || text.isEmpty()) {
            return SpanContext.getInvalid();
        }
        return Span.fromContext(W3C.extract(Context.root(), text, ONE_VALUE)).getSpanContext();
    }

    /** {@code text} as a valid traceparent (version 00), else null: what is stored is never anything else. */
    public static String valid(String text) {
        return of(parse(text));
    }
}
