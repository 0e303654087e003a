package dev.metakit.inbox.routefiles;

import org.apache.camel.CamelContext;
import org.apache.camel.Route;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.spi.Resource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;

/**
 * What a route file without routes loads as: nothing at startup; saved into a running bundle, the routes that file
 * held are stopped and removed (Camel's reload only replaces the routes a file still has, which would leave them
 * running from a file that no longer says so, and gone at the next start).
 */
final class NoRoutes extends RouteBuilder {
    private static final Logger LOG = LoggerFactory.getLogger(NoRoutes.class);
    private final Resource file;

    NoRoutes(Resource file) {
        this.file = file;
    }

    @Override
    public void configure() {
        // a file left without routes adds none
    }

    @Override
    public Set<String> updateRoutesToCamelContext(CamelContext context) throws Exception {
        List<String> held = context.getRoutes().stream()
                .filter(r -> r.getSourceResource() != null && file.getLocation().equals(r.getSourceResource().getLocation()))
                .map(Route::getRouteId).toList();
        for (String id : held) {
            context.getRouteController().stopRoute(id);
            context.removeRoute(id);
        }
        if (!held.isEmpty()) {
            LOG.info("Route file {} holds no route: removed {}", RouteFileError.shortName(file.getLocation()),
                    String.join(", ", held));
        }
        return Set.of();
    }
}
