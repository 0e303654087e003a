package dev.metakit.example.quarkus;

import dev.metakit.inbox.reconcile.ReconcileRoutes;
import dev.metakit.inbox.worker.WorkerRoutes;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** The bundle's Java DSL routes: Camel Quarkus adds every RouteBuilder bean to the CamelContext. */
@ApplicationScoped
public class BundleRoutes {
    @Produces
    @ApplicationScoped
    WorkerRoutes metakitWorkerRoutes() {
        return new WorkerRoutes();
    }

    @Produces
    @ApplicationScoped
    ReconcileRoutes metakitReconcileRoutes() {
        return new ReconcileRoutes();
    }
}
