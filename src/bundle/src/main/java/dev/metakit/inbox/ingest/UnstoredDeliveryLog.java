package dev.metakit.inbox.ingest;

import dev.metakit.inbox.trace.LogContext;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The line of a delivery the ingest route answers 503, on the logger named after the route (as its own {@code log}
 * steps would be): WARN for a failure, INFO for a stop (the design, no fault), DEBUG for a delivery shed because the
 * inbox cannot keep up (counted, not worth a line each). The reason is the exception's message, never the body. Written
 * with the delivery's key, account and POST span's ids in the logging context ({@link DeliveryLogContext}) on the
 * thread that answers, which after a failed commit is the inbox writer's, not the request's.
 */
public class UnstoredDeliveryLog implements Processor {
    private final DeliveryLogContext logContext = new DeliveryLogContext();

    @Override
    public void process(Exchange exchange) {
        Throwable failure = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        Level level = failure instanceof InboxOverloadedException ? Level.DEBUG
                : failure instanceof InboxStoppingException ? Level.INFO : Level.WARN;
        Logger log = LoggerFactory.getLogger(exchange.getFromRouteId() != null ? exchange.getFromRouteId()
                : UnstoredDeliveryLog.class.getName());
        if (!log.isEnabledForLevel(level)) {
            // shed by the thousand under overload: no logging context made for a line not written
            return;
        }
        String reason = failure == null ? "no exception" : failure.getMessage() != null ? failure.getMessage()
                : failure.getClass().getSimpleName();
        try (LogContext delivery = logContext.open(exchange)) {
            log.atLevel(level).log(switch (level) {
                case DEBUG -> "Delivery shed, answered 503 so MetaKit retries: {}";
                case INFO -> "Delivery not stored while stopping, answered 503 so MetaKit retries: {}";
                default -> "Delivery not stored, answered 503 so MetaKit retries: {}";
            }, reason);
        }
    }
}
