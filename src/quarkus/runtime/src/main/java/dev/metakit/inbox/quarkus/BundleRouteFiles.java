package dev.metakit.inbox.quarkus;

import org.apache.camel.CamelContext;
import org.apache.camel.component.micrometer.routepolicy.MicrometerRoutePolicyFactory;
import org.apache.camel.spi.Resource;
import org.apache.camel.spi.RoutePolicyFactory;
import org.apache.camel.support.PluginHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Loads the bundle's route files ({@code metakit.route-files}) into the host's CamelContext before it starts, whatever
 * the host's own {@code camel.main.routes-include-pattern} says (a host's pattern would otherwise replace the bundle's
 * files). Then adds the bundle's route meters ({@code camelRouteMetrics}, a bean of routes/beans.camel.yaml) unless
 * Camel Quarkus already times every route ({@code quarkus.camel.metrics.enable-route-policy}, its default): two
 * factories would count each exchange twice.
 */
final class BundleRouteFiles {
    private static final Logger LOG = LoggerFactory.getLogger(BundleRouteFiles.class);
    static final String ROUTE_METRICS_BEAN = "camelRouteMetrics";

    private BundleRouteFiles() {
    }

    static void load(CamelContext context, String locations) {
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
        addRouteMeters(context);
    }

    private static void addRouteMeters(CamelContext context) {
        RoutePolicyFactory meters = context.getRegistry().lookupByNameAndType(ROUTE_METRICS_BEAN, RoutePolicyFactory.class);
        boolean timedAlready = context.getRoutePolicyFactories().stream()
                .anyMatch(MicrometerRoutePolicyFactory.class::isInstance);
        if (meters != null && !timedAlready) {
            context.addRoutePolicyFactory(meters);
        }
    }
}
