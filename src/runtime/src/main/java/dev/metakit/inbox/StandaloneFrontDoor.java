package dev.metakit.inbox;

import dev.metakit.inbox.frontdoor.EventLoopHandOff;
import dev.metakit.inbox.frontdoor.FrontDoorEvents;
import dev.metakit.inbox.frontdoor.FrontDoorServerFactory;
import dev.metakit.inbox.ingest.InboxStore;
import dev.metakit.inbox.ops.InboxMetrics;
import org.apache.camel.CamelContext;

/**
 * The front door as the standalone run wires it to the bundle (routes/standalone.camel.yaml): its events counted by
 * the bundle's meters ({@code inboxMetrics}), and the ingest route's store step resuming on the connection's event
 * loop ({@link InboxStore#RESUME_ON_PROPERTY}). The front door itself depends on neither.
 */
public class StandaloneFrontDoor extends FrontDoorServerFactory {
    private static final String METRICS_BEAN = "inboxMetrics";
    private static final EventLoopHandOff RESUME_INBOX_STORE_ON_LOOP =
            (exchange, loop) -> exchange.setProperty(InboxStore.RESUME_ON_PROPERTY, loop);

    @Override
    protected FrontDoorEvents events(CamelContext context) {
        InboxMetrics metrics = context.getRegistry().lookupByNameAndType(METRICS_BEAN, InboxMetrics.class);
        if (metrics == null) {
            return FrontDoorEvents.NONE;
        }
        return new FrontDoorEvents() {
            @Override
            public void clientClosed() {
                metrics.clientClosed();
            }

            @Override
            public void connectionCut(String reason) {
                metrics.connectionCut(reason);
            }
        };
    }

    @Override
    protected EventLoopHandOff eventLoopHandOff() {
        return RESUME_INBOX_STORE_ON_LOOP;
    }
}
