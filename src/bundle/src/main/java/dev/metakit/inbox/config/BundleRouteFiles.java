package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.spi.Resource;
import org.apache.camel.support.PluginHelper;

import java.util.ArrayList;
import java.util.List;

/**
 * The bundle's route files ({@code metakit.route-files}: comma-separated locations or patterns) loaded into a host's
 * CamelContext, by the starter and the Quarkus extension alike: whatever the host's own
 * {@code camel.main.routes-include-pattern} says, which would otherwise replace the bundle's files. A location that
 * cannot be listed, a setting that names no file, or a file that does not load stops the host's start with the reason.
 */
public final class BundleRouteFiles {
    /** The bundle's route meters: a bean of routes/beans.camel.yaml, added by a host that does not time routes. */
    public static final String ROUTE_METRICS_BEAN = "camelRouteMetrics";

    private BundleRouteFiles() {
    }

    /** Loads the files {@code locations} names into {@code context}; returns how many. */
    public static int load(CamelContext context, String locations) {
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
        return files.size();
    }
}
