package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxRow;
import dev.metakit.inbox.reconcile.AccountReconcile;
import dev.metakit.inbox.trace.CamelTracing;
import dev.metakit.inbox.trace.ExchangeSpan;
import dev.metakit.inbox.trace.LogContext;
import dev.metakit.inbox.trace.TraceParent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import org.apache.camel.Exchange;

/**
 * The span of one account's reconcile, {@value #NAME}. A reconcile serves many deliveries at once, so, as a batch
 * consumer's span, it is linked to the ingest span of every delivery it serves (their contexts stored with the rows)
 * and is the root of a trace of its own when the worker starts it; a full reconcile's is a child of that run's. The
 * MetaKit calls are client spans under it (Camel's), and each change it writes keeps its context for the feed.
 * Attributes: the account, the trigger, how many deliveries it serves; no body, no secret.
 */
final class ReconcileSpans {
    static final String NAME = "metakit.reconcile";
    static final AttributeKey<Long> ACCOUNT = AttributeKey.longKey("metakit.account.id");
    static final AttributeKey<String> TRIGGER = AttributeKey.stringKey("metakit.reconcile.trigger");
    static final AttributeKey<Long> DELIVERIES = AttributeKey.longKey("metakit.reconcile.deliveries");

    private final CamelTracing tracing = new CamelTracing();

    /**
     * Starts the span of the reconcile the exchange's body asks for (none when tracing is off), and puts the account
     * and the span's ids in this thread's logging context until {@link #end}: the reconcile runs on this one thread.
     */
    void begin(Exchange exchange) {
        AccountReconcile reconcile = exchange.getMessage().getBody(AccountReconcile.class);
        Tracer tracer = tracing.tracer(exchange.getContext());
        if (tracer != null) {
            ExchangeSpan.attach(exchange, span(tracer, reconcile, exchange).startSpan());
        }
        LogContext.enter(exchange, reconcile.accountId());
    }

    /** Ends the span {@link #begin} started, and takes the logging context off the thread. */
    static void end(Exchange exchange) {
        ExchangeSpan.end(exchange);
        LogContext.leave(exchange);
    }

    private static SpanBuilder span(Tracer tracer, AccountReconcile reconcile, Exchange exchange) {
        SpanBuilder span = tracer.spanBuilder(NAME)
                .setAttribute(ACCOUNT, reconcile.accountId())
                .setAttribute(TRIGGER, reconcile.trigger());
        // the run this reconcile is part of (a full reconcile's spans, as Camel's tracing names them on the message)
        SpanContext run = TraceParent.parse(CamelTracing.spanOf(exchange));
        if (run.isValid()) {
            span.setParent(Context.root().with(Span.wrap(run)));
        } else {
            span.setNoParent();
        }
        AccountWork work = exchange.getProperty(InboxToPositionRoutes.WORK_PROPERTY, AccountWork.class);
        if (work != null) {
            span.setAttribute(DELIVERIES, (long) work.rows().size());
            for (InboxRow row : work.rows()) {
                SpanContext delivery = TraceParent.parse(row.traceParent());
                if (delivery.isValid()) {
                    span.addLink(delivery);
                }
            }
        }
        return span;
    }
}
