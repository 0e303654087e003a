package dev.metakit.inbox.ingest;

import dev.metakit.inbox.trace.CamelTracing;
import dev.metakit.inbox.trace.LogContext;
import org.apache.camel.Exchange;

/**
 * The logging context of the lines about the delivery an ingest exchange carries: its key and account once its
 * signature has verified (none before: an unverified request names nothing it could be trusted for), and with tracing
 * on the ids of its POST's span, the context its row keeps. Never the body or a header.
 */
final class DeliveryLogContext {
    private final CamelTracing tracing = new CamelTracing();

    /** The delivery's context on this thread until closed. */
    LogContext open(Exchange exchange) {
        Delivery delivery = exchange.getProperty(InboxRepository.DELIVERY_PROPERTY, Delivery.class);
        String key = delivery == null ? null
                : exchange.getProperty(InboxRepository.DELIVERY_KEY_PROPERTY, String.class);
        String span = tracing.isOn(exchange.getContext()) ? CamelTracing.spanOf(exchange) : null;
        return LogContext.ofDelivery(key, delivery == null ? null : delivery.accountId(), span);
    }
}
