package dev.metakit.inbox.conformance;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.SpanData;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What the spans a runtime finished say about one delivery's way, read as an operator reads a trace: the span a stored
 * {@code traceparent} names, the reconcile linked to it, the calls under the reconcile, the spans of its trace.
 */
record TraceOfADelivery(List<SpanData> spans) {
    static final String RECONCILE = "metakit.reconcile";
    static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.method");

    /** A W3C {@code traceparent}'s trace id and parent (span) id: version 00, 32 and 16 lower-case hex digits. */
    record Ids(String traceId, String spanId) {
        static Ids of(String traceParent) {
            Objects.requireNonNull(traceParent, "no traceparent stored");
            String[] parts = traceParent.split("-");
            if (parts.length != 4 || !parts[0].equals("00") || !parts[1].matches("[0-9a-f]{32}")
                    || !parts[2].matches("[0-9a-f]{16}")) {
                throw new IllegalArgumentException("not a traceparent: " + traceParent);
            }
            return new Ids(parts[1], parts[2]);
        }

        boolean name(SpanData span) {
            return span.getTraceId().equals(traceId) && span.getSpanId().equals(spanId);
        }
    }

    Optional<SpanData> span(Ids ids) {
        return spans.stream().filter(ids::name).findFirst();
    }

    /** Whether {@code span} is linked to the span {@code ids} name. */
    boolean linked(SpanData span, Ids ids) {
        return span.getLinks().stream().anyMatch(l -> l.getSpanContext().getTraceId().equals(ids.traceId())
                && l.getSpanContext().getSpanId().equals(ids.spanId()));
    }

    /** The spans of HTTP calls (an {@value #HTTP_METHOD}) whose chain of parents reaches {@code ancestor}. */
    List<SpanData> httpCallsUnder(SpanData ancestor) {
        return traceOf(ancestor).filter(s -> s.getAttributes().get(HTTP_METHOD) != null)
                .filter(s -> descendsFrom(s, ancestor)).toList();
    }

    /** The HTTP method of a span's request (Camel's tracing names it so on its HTTP spans), or null. */
    static String httpMethod(SpanData span) {
        return span.getAttributes().get(HTTP_METHOD);
    }

    /** The spans of {@code span}'s trace. */
    Stream<SpanData> traceOf(SpanData span) {
        return spans.stream().filter(s -> s.getTraceId().equals(span.getTraceId()));
    }

    boolean descendsFrom(SpanData span, SpanData ancestor) {
        return Stream.iterate(span, Objects::nonNull, this::parentOf)
                .anyMatch(p -> p.getSpanId().equals(ancestor.getSpanId()));
    }

    private SpanData parentOf(SpanData span) {
        return spans.stream().filter(p -> p.getTraceId().equals(span.getTraceId())
                && p.getSpanId().equals(span.getParentSpanId())).findFirst().orElse(null);
    }
}
