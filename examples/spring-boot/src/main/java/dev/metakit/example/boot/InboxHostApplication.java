package dev.metakit.example.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An application that already runs Camel on Spring Boot and takes metakit-inbox in as a dependency: the bundle's
 * route files come from its jar (application.yaml names them), its beans use this application's DataSource, and its
 * webhook, health and meters are served by this application's server and Actuator.
 */
@SpringBootApplication
public class InboxHostApplication {
    public static void main(String[] args) {
        SpringApplication.run(InboxHostApplication.class, args);
    }
}
