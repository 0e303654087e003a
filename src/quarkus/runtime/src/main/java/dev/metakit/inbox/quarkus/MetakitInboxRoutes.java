package dev.metakit.inbox.quarkus;

import dev.metakit.inbox.worker.InboxToPositionRoutes;
import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The bundle's Java DSL routes (the worker, one account's reconcile, the full reconcile) as a RouteBuilder bean:
 * Camel Quarkus adds every RoutesBuilder bean to the CamelContext. A host's own bean of the type replaces it.
 */
@Singleton
public class MetakitInboxRoutes {
    @Produces
    @Singleton
    @DefaultBean
    InboxToPositionRoutes metakitInboxToPositionRoutes() {
        return new InboxToPositionRoutes();
    }
}
