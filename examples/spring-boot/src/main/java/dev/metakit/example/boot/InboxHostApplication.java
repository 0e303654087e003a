package dev.metakit.example.boot;

import dev.metakit.inbox.reconcile.ReconcileRoutes;
import dev.metakit.inbox.worker.WorkerRoutes;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * An application that already runs Camel on Spring Boot and takes metakit-inbox in as a dependency: the bundle's
 * route files come from its jar (application.yaml names them), its Java routes (the worker and the reconcile) are
 * RouteBuilder beans here, its beans use this application's DataSource, and its webhook, health and meters are
 * served by this application's server and Actuator.
 */
@SpringBootApplication
public class InboxHostApplication {
    @Bean
    WorkerRoutes metakitWorkerRoutes() {
        return new WorkerRoutes();
    }

    @Bean
    ReconcileRoutes metakitReconcileRoutes() {
        return new ReconcileRoutes();
    }

    public static void main(String[] args) {
        SpringApplication.run(InboxHostApplication.class, args);
    }
}
