package dev.metakit.example.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An application that runs Camel on Spring Boot and takes metakit-inbox in with its starter: the bundle's routes,
 * beans, health and meters come with the dependency, on this application's database (through a pool of the bundle's
 * own), server and Actuator.
 */
@SpringBootApplication
public class InboxHostApplication {
    public static void main(String[] args) {
        SpringApplication.run(InboxHostApplication.class, args);
    }
}
