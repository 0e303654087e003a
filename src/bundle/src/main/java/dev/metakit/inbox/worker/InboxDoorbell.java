package dev.metakit.inbox.worker;

import org.apache.camel.CamelContext;
import org.apache.camel.Endpoint;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.apache.camel.Producer;
import org.apache.camel.component.seda.QueueReference;
import org.apache.camel.component.seda.SedaComponent;
import org.apache.camel.support.DefaultExchange;

/**
 * Rings the worker's doorbell (a seda queue of size 1 that {@link InboxToPositionRoutes} consumes): a hint that the inbox has
 * work, never the truth (the inbox table is, and the poll catches a ring that was lost). A ring into a full doorbell is
 * dropped, and so cheaply: the ingest route rings after every new row, so the ring is an empty exchange, sent only
 * when the queue has room.
 */
public class InboxDoorbell implements Processor {
    private static final String QUEUE = "inbox-doorbell";
    static final String QUEUE_URI = "seda:" + QUEUE;
    private static final String RING_URI =
            QUEUE_URI + "?size=1&waitForTaskToComplete=Never&blockWhenFull=false&discardWhenFull=true";

    private volatile Producer producer;
    private volatile QueueReference queue;

    @Override
    public void process(Exchange exchange) throws Exception {
        ring(exchange.getContext());
    }

    public void ring(CamelContext context) throws Exception {
        if (!hasRoom(context)) {
            return;
        }
        Producer p = producer;
        if (p == null) {
            p = producer(context);
        }
        p.process(new DefaultExchange(context));
    }

    private synchronized Producer producer(CamelContext context) throws Exception {
        if (producer == null) {
            Endpoint endpoint = context.getEndpoint(RING_URI);
            Producer p = endpoint.createProducer();
            p.start();
            producer = p;
        }
        return producer;
    }

    private boolean hasRoom(CamelContext context) {
        QueueReference ref = queue;
        if (ref == null || !ref.hasConsumers()) {
            // not created yet, or the doorbell's route stopped or was reloaded: ring, and look again next time
            queue = find(context);
            return true;
        }
        return ref.getQueue().remainingCapacity() > 0;
    }

    private static QueueReference find(CamelContext context) {
        SedaComponent seda = context.getComponent("seda", SedaComponent.class);
        if (seda == null) {
            return null;
        }
        QueueReference ref = seda.getQueueReference(seda.getQueueKey("seda://" + QUEUE));
        return ref != null && ref.hasConsumers() ? ref : null;
    }
}
