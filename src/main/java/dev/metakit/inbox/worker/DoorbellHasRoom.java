package dev.metakit.inbox.worker;

import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.Predicate;
import org.apache.camel.component.seda.QueueReference;
import org.apache.camel.component.seda.SedaComponent;

/**
 * True while the worker's doorbell (a seda queue of size 1) has room for a ring. The ingest route asks before it
 * rings: a ring into the full queue is discarded anyway, but only after seda has copied the exchange, which under
 * load is most deliveries' cost for nothing.
 */
public class DoorbellHasRoom implements Predicate {
    private String queue = "inbox-doorbell";
    private volatile QueueReference doorbell;

    @Override
    public boolean matches(Exchange exchange) {
        QueueReference ref = doorbell;
        if (ref == null || !ref.hasConsumers()) {
            // not created yet, or the worker's route stopped or was reloaded: ring, and look again next time
            ref = find(exchange.getContext());
            doorbell = ref;
            return true;
        }
        return ref.getQueue().remainingCapacity() > 0;
    }

    private QueueReference find(CamelContext context) {
        SedaComponent seda = context.getComponent("seda", SedaComponent.class);
        if (seda == null) {
            return null;
        }
        QueueReference ref = seda.getQueueReference(seda.getQueueKey("seda://" + queue));
        return ref != null && ref.hasConsumers() ? ref : null;
    }

    /** the seda queue name the ingest route rings and the worker's doorbell route consumes */
    public void setQueue(String queue) {
        this.queue = queue;
    }
}
