package dev.metakit.inbox.springboot;

import org.apache.camel.CamelContext;
import org.apache.camel.component.micrometer.routepolicy.MicrometerRoutePolicyFactory;
import org.apache.camel.spi.Resource;
import org.apache.camel.spi.RoutePolicyFactory;
import org.apache.camel.spring.boot.CamelContextConfiguration;
import org.apache.camel.support.PluginHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Loads the bundle's route files into the host's CamelContext before it starts, whatever the host's own
 * {@code camel.main.routes-include-pattern} says (a host's pattern would otherwise replace the bundle's files, and a
 * missing file would go unnoticed). Then registers the bundle's route meters ({@code camelRouteMetrics}, a bean of
 * routes/beans.camel.yaml) when the host has turned Camel Spring Boot's own route timing off: Camel Spring Boot takes
 * route policy factories from Spring's beans only, before the route files are loaded.
 */
public class MetakitRouteFiles implements CamelContextConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(MetakitRouteFiles.class);
    static final String ROUTE_METRICS_BEAN = "camelRouteMetrics";

    private final String locations;

    public MetakitRouteFiles(String locations) {
        this.locations = locations;
    }

    @Override
    public void beforeApplicationStart(CamelContext context) {
        List<Resource> files = new ArrayList<>();
        for (String location : locations.split(",")) {
            String pattern = location.trim();
            if (pattern.isEmpty()) {
                continue;
            }
            try {
                files.addAll(PluginHelper.getPackageScanResourceResolver(context).findResources(pattern));
            } catch (Exception e) {
                throw new IllegalStateException("metakit.route-files: cannot list " + pattern + ": " + e.getMessage(), e);
            }
        }
        if (files.isEmpty()) {
            throw new IllegalStateException("metakit.route-files (" + locations + ") names no route file");
        }
        try {
            PluginHelper.getRoutesLoader(context).loadRoutes(files);
        } catch (Exception e) {
            throw new IllegalStateException("the bundle's route files did not load: " + e.getMessage(), e);
        }
        LOG.info("metakit-inbox: loaded {} route files from {}", files.size(), locations);
        RoutePolicyFactory meters = context.getRegistry().lookupByNameAndType(ROUTE_METRICS_BEAN, RoutePolicyFactory.class);
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
