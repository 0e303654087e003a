package dev.metakit.inbox;

import dev.metakit.inbox.frontdoor.FrontDoorEvents;
import dev.metakit.inbox.frontdoor.FrontDoorServerFactory;
import dev.metakit.inbox.ops.InboxMetrics;
import org.apache.camel.CamelContext;

/**
 * The front door as the standalone run wires it to the bundle (routes/standalone.camel.yaml): its events counted by
 * the bundle's meters ({@code inboxMetrics}). The front door itself does not depend on them.
 */
public class StandaloneFrontDoor extends FrontDoorServerFactory {
    private static final String METRICS_BEAN = "inboxMetrics";

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
}
