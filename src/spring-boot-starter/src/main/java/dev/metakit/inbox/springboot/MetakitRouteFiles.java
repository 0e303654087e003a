package dev.metakit.inbox.springboot;

import dev.metakit.inbox.config.BundleRouteFiles;
import org.apache.camel.CamelContext;
import org.apache.camel.component.micrometer.routepolicy.MicrometerRoutePolicyFactory;
import org.apache.camel.spi.RoutePolicyFactory;
import org.apache.camel.spring.boot.CamelContextConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the bundle's route files into the host's CamelContext before it starts, whatever the host's own
 * {@code camel.main.routes-include-pattern} says (a host's pattern would otherwise replace the bundle's files, and a
 * missing file would go unnoticed). Then registers the bundle's route meters ({@code camelRouteMetrics}, a bean of
 * routes/beans.camel.yaml) when the host has turned Camel Spring Boot's own route timing off: Camel Spring Boot takes
 * route policy factories from Spring's beans only, before the route files are loaded.
 */
public class MetakitRouteFiles implements CamelContextConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(MetakitRouteFiles.class);

    private final String locations;

    public MetakitRouteFiles(String locations) {
        this.locations = locations;
    }

    @Override
    public void beforeApplicationStart(CamelContext context) {
        int files = BundleRouteFiles.load(context, locations);
        LOG.info("metakit-inbox: loaded {} route files from {}", files, locations);
        RoutePolicyFactory meters = context.getRegistry()
                .lookupByNameAndType(BundleRouteFiles.ROUTE_METRICS_BEAN, RoutePolicyFactory.class);
        // Camel Spring Boot's route timing (camel.metrics.enable-route-policy, on unless the host turns it off) has
        // every route timed already, the bundle's included: a second factory would record each exchange twice on the same meters
        boolean timedByTheHost = context.getRoutePolicyFactories().stream()
                .anyMatch(factory -> factory instanceof MicrometerRoutePolicyFactory && factory != meters);
        if (meters != null && !timedByTheHost && !context.getRoutePolicyFactories().contains(meters)) {
            context.addRoutePolicyFactory(meters);
        }
    }

    @Override
    public void afterApplicationStart(CamelContext context) {
    }
}
