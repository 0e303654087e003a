package dev.metakit.inbox.trace;

import io.opentelemetry.api.trace.SpanContext;
import org.apache.camel.Exchange;
import org.slf4j.MDC;

/**
 * What the log lines on a delivery's way carry in the logging context (MDC), for a log pattern or a JSON layout to show
 * and a log search to join with the trace: {@value #TRACE_ID} and {@value #SPAN_ID} (OpenTelemetry's own names for
 * them, when tracing is on) and the account ({@value #ACCOUNT}) or the delivery ({@value #DELIVERY}). Put on the
 * thread that does the work and taken off at its end, so a thread never lends them to another account's lines; one
 * opened inside another (a line of the store within the ingest route's) gives the outer one back when it closes.
 */
public final class LogContext implements AutoCloseable {
    public static final String TRACE_ID = "trace_id";
    public static final String SPAN_ID = "span_id";
    public static final String ACCOUNT = "metakit.account";
    public static final String DELIVERY = "metakit.delivery";
    private static final String[] KEYS = {DELIVERY, ACCOUNT, TRACE_ID, SPAN_ID};

    /** what the thread carried before, given back on {@link #close} */
    private final String[] before = new String[KEYS.length];

    private LogContext() {
        for (int i = 0; i < KEYS.length; i++) {
            before[i] = MDC.get(KEYS[i]);
        }
    }

    /** The account and the span's ids (none when {@code traceParent} is null) on this thread until closed. */
    public static LogContext of(long accountId, String traceParent) {
        LogContext context = new LogContext();
        put(accountId, TraceParent.parse(traceParent));
        return context;
    }

    /**
     * A delivery's key ({@value #DELIVERY}; none when null: a delivery not verified yet), its account when it names
     * one, and the ids of its POST's span (none when {@code traceParent} is null), on this thread until closed: for the
     * lines about one delivery outside a reconcile (its ingest, a dead letter).
     */
    public static LogContext ofDelivery(String deliveryKey, Long accountId, String traceParent) {
        LogContext context = new LogContext();
        putOrRemove(DELIVERY, deliveryKey);
        putOrRemove(ACCOUNT, accountId == null ? null : accountId.toString());
        putIds(TraceParent.parse(traceParent));
        return context;
    }

    /** As {@link #of}, for the account and the span an exchange carries (its {@link ExchangeSpan}), until {@link #leave}. */
    public static void enter(Exchange exchange, long accountId) {
        put(accountId, TraceParent.parse(ExchangeSpan.traceParentOf(exchange)));
    }

    /** Takes off what {@link #enter} put on. */
    public static void leave(Exchange exchange) {
        clear();
    }

    /** Gives the thread back what it carried before this context. */
    @Override
    public void close() {
        for (int i = 0; i < KEYS.length; i++) {
            putOrRemove(KEYS[i], before[i]);
        }
    }

    private static void putOrRemove(String key, String value) {
        if (value != null) {
            MDC.put(key, value);
        } else {
            MDC.remove(key);
        }
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
        for (String key : KEYS) {
            MDC.remove(key);
        }
    }
}
