package dev.metakit.example.quarkus;

import dev.metakit.inbox.worker.InboxToPositionRoutes;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** The bundle's Java DSL routes: Camel Quarkus adds every RouteBuilder bean to the CamelContext. */
@ApplicationScoped
public class BundleRoutes {
    @Produces
    @ApplicationScoped
    InboxToPositionRoutes metakitInboxToPositionRoutes() {
        return new InboxToPositionRoutes();
    }
}
