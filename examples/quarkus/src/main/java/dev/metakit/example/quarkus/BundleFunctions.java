package dev.metakit.example.quarkus;

import dev.metakit.inbox.config.DurationMillisFunction;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.apache.camel.quarkus.main.events.BeforeInitialize;

/**
 * The bundle's {@code {{metakit-millis:...}}} properties function, added before the route files are read: Camel
 * Quarkus does not discover it from the bundle jar's service file as camel-main does.
 */
@ApplicationScoped
public class BundleFunctions {
    void addPropertiesFunction(@Observes BeforeInitialize event) {
        DurationMillisFunction millis = new DurationMillisFunction();
        millis.setCamelContext(event.getCamelContext());
        event.getCamelContext().getPropertiesComponent().addPropertiesFunction(millis);
    }
}
