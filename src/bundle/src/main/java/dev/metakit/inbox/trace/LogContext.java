package dev.metakit.inbox.trace;

import io.opentelemetry.api.trace.SpanContext;
import org.apache.camel.Exchange;
import org.slf4j.MDC;

/**
 * What the log lines on a delivery's way carry in the logging context (MDC), for a log pattern or a JSON layout to show
 * and a log search to join with the trace: {@value #TRACE_ID} and {@value #SPAN_ID} (OpenTelemetry's own names for
 * them, when tracing is on) and the account ({@value #ACCOUNT}) or the delivery ({@value #DELIVERY}). Put on the
 * thread that does the work and taken off at its end, so a thread never lends them to another account's lines.
 */
public final class LogContext implements AutoCloseable {
    public static final String TRACE_ID = "trace_id";
    public static final String SPAN_ID = "span_id";
    public static final String ACCOUNT = "metakit.account";
    public static final String DELIVERY = "metakit.delivery";

    private LogContext() {
    }

    /** The account and the span's ids (none when {@code traceParent} is null) on this thread until closed. */
    public static LogContext of(long accountId, String traceParent) {
        put(accountId, TraceParent.parse(traceParent));
        return new LogContext();
    }

    /**
     * A delivery's key ({@value #DELIVERY}), its account when it names one, and the ids of the span its row keeps (its
     * POST's), on this thread until closed: for the lines about one delivery outside a reconcile (a dead letter).
     */
    public static LogContext ofDelivery(String deliveryKey, Long accountId, String traceParent) {
        MDC.put(DELIVERY, deliveryKey);
        if (accountId != null) {
            put(accountId, TraceParent.parse(traceParent));
        } else {
            MDC.remove(ACCOUNT);
            putIds(TraceParent.parse(traceParent));
        }
        return new LogContext();
    }

    /** As {@link #of}, for the account and the span an exchange carries (its {@link ExchangeSpan}), until {@link #leave}. */
    public static void enter(Exchange exchange, long accountId) {
        put(accountId, TraceParent.parse(ExchangeSpan.traceParentOf(exchange)));
    }

    /** Takes off what {@link #enter} put on. */
    public static void leave(Exchange exchange) {
        clear();
    }

    @Override
    public void close() {
        clear();
    }

    private static void put(long accountId, SpanContext span) {
        MDC.put(ACCOUNT, Long.toString(accountId));
        putIds(span);
    }

    private static void putIds(SpanContext span) {
        if (span.isValid()) {
            MDC.put(TRACE_ID, span.getTraceId());
            MDC.put(SPAN_ID, span.getSpanId());
        } else {
            MDC.remove(TRACE_ID);
            MDC.remove(SPAN_ID);
        }
    }

    private static void clear() {
        MDC.remove(DELIVERY);
        MDC.remove(ACCOUNT);
        MDC.remove(TRACE_ID);
        MDC.remove(SPAN_ID);
    }
}
