package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.apache.camel.builder.RouteBuilder;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The routes the bundle's guarantees rest on, and where each comes from: a route file (routes/, which a runtime is
 * told to load) or one of the bundle's Java {@link RouteBuilder}s (which a runtime must register). Without any of
 * them a delivery could be stored and never processed, a lost delivery never repaired, or a change never published.
 * The Java routes' ids are their builders' constants; the route files' ids are spelled here and in their file, the
 * only place in Java that names them. The ingest route is also known by its consumer, the webhook's path, because
 * integrators may rename it (docs/routes.md).
 * <p>
 * Not here: the retention and metrics-refresh routes (housekeeping and meters, no guarantee rests on them).
 */
public enum EssentialRoute {
    /** stores each delivery */
    INGEST("metakit-ingest", "ingest.camel.yaml"),
    /** MetaKit's REST GET, every reconcile's */
    API_GET("metakit-api-get", "metakit-api.camel.yaml"),
    /** the worker's durable poll: retries that came due, doorbells lost in a crash */
    WORKER_POLL("metakit-worker-poll", "worker.camel.yaml"),
    WORKER_DOORBELL(InboxToPositionRoutes.DOORBELL_ROUTE, InboxToPositionRoutes.class),
    WORKER_DRAIN(InboxToPositionRoutes.DRAIN_ROUTE, InboxToPositionRoutes.class),
    RECONCILE_ACCOUNT(InboxToPositionRoutes.RECONCILE_ACCOUNT_ROUTE, InboxToPositionRoutes.class),
    FULL_RECONCILE(InboxToPositionRoutes.FULL_RECONCILE_ROUTE, InboxToPositionRoutes.class),
    /** the full reconcile the delivery-status watch asks for */
    FULL_RECONCILE_REQUESTED(InboxToPositionRoutes.REQUESTED_ROUTE, InboxToPositionRoutes.class),
    /** catches what webhooks drop */
    PERIODIC_RECONCILE("metakit-reconcile-periodic", "reconcile.camel.yaml"),
    /** the watch on MetaKit's lastDeliveryStatus */
    DELIVERY_STATUS_WATCH("metakit-delivery-status-watch", "status.camel.yaml"),
    /** the change feed: the publisher's poll and the outlet it sends to */
    FEED_POLL("metakit-change-feed-poll", "changes.camel.yaml"),
    FEED_OUTLET("metakit-change-outlet", "changes.camel.yaml");

    private final String routeId;
    private final String routeFile;
    private final Class<? extends RouteBuilder> builder;

    EssentialRoute(String routeId, String routeFile) {
        this.routeId = routeId;
        this.routeFile = routeFile;
        this.builder = null;
    }

    EssentialRoute(String routeId, Class<? extends RouteBuilder> builder) {
        this.routeId = routeId;
        this.routeFile = null;
        this.builder = builder;
    }

    /** the id the bundle gives it */
    public String routeId() {
        return routeId;
    }

    /** the file of routes/ that holds it, or null for a Java route */
    public String routeFile() {
        return routeFile;
    }

    /** the RouteBuilder that adds it, or null for a route of a file */
    public Class<? extends RouteBuilder> builder() {
        return builder;
    }

    /** How a runtime gets it, for the one line that says it is missing. */
    String howToRegister() {
        if (builder != null) {
            return "register the RouteBuilder " + builder.getName()
                    + " (camel-main: camel.main.routes-builder-classes;"
                    + " Spring Boot: a @Bean of it, as the bundle's starter declares;"
                    + " Quarkus: a CDI bean of it, as the bundle's extension metakit-inbox-quarkus produces it;"
                    + " a plain CamelContext: addRoutes(new " + builder.getSimpleName() + "()))";
        }
        return "load routes/" + routeFile + " (camel-main: camel.main.routes-include-pattern;"
                + " Spring Boot with the bundle's starter and Quarkus with its extension: metakit.route-files;"
                + " a plain CamelContext: its RoutesLoader)";
    }

    static java.util.Optional<EssentialRoute> byId(String routeId) {
        return Arrays.stream(values()).filter(r -> r.routeId.equals(routeId)).findFirst();
    }

    /**
     * The routes named by {@code metakit.routes.replaced} (comma-separated route ids, blank: none). A name that is not
     * an essential route's id is refused: a typo would otherwise leave a route missing without a word.
     */
    public static Set<EssentialRoute> parseReplaced(String setting) {
        Set<EssentialRoute> replaced = EnumSet.noneOf(EssentialRoute.class);
        for (String name : setting.split(",")) {
            String id = name.trim();
            if (id.isEmpty()) {
                continue;
            }
            replaced.add(byId(id).orElseThrow(() -> new ConfigurationException("metakit.routes.replaced names " + id
                            + ", which is not one of the bundle's essential routes (" + Arrays.stream(values())
                            .map(EssentialRoute::routeId).collect(Collectors.joining(", ")) + ")")));
        }
        return replaced;
    }
}
