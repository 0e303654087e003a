package dev.metakit.inbox.quarkus;

import dev.metakit.inbox.config.BundleRouteFiles;
import org.apache.camel.CamelContext;
import org.apache.camel.component.micrometer.routepolicy.MicrometerRoutePolicyFactory;
import org.apache.camel.spi.RoutePolicyFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads the bundle's route files ({@code metakit.route-files}, {@link BundleRouteFiles}) into the host's CamelContext
 * before it starts. Then adds the bundle's route meters ({@code camelRouteMetrics}, a bean of routes/beans.camel.yaml)
 * unless Camel Quarkus already times every route ({@code quarkus.camel.metrics.enable-route-policy}, its default): two
 * factories would count each exchange twice.
 */
final class QuarkusRouteFiles {
    private static final Logger LOG = LoggerFactory.getLogger(QuarkusRouteFiles.class);

    private QuarkusRouteFiles() {
    }

    static void load(CamelContext context, String locations) {
        int files = BundleRouteFiles.load(context, locations);
        LOG.info("metakit-inbox: loaded {} route files from {}", files, locations);
        addRouteMeters(context);
    }

    private static void addRouteMeters(CamelContext context) {
        RoutePolicyFactory meters = context.getRegistry()
                .lookupByNameAndType(BundleRouteFiles.ROUTE_METRICS_BEAN, RoutePolicyFactory.class);
        boolean timedAlready = context.getRoutePolicyFactories().stream()
                .anyMatch(MicrometerRoutePolicyFactory.class::isInstance);
        if (meters != null && !timedAlready) {
            context.addRoutePolicyFactory(meters);
        }
    }
}
