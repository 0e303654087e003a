package dev.metakit.inbox.ops;

import org.apache.camel.CamelContext;
import org.apache.camel.NamedNode;
import org.apache.camel.component.micrometer.routepolicy.MicrometerRoutePolicyFactory;
import org.apache.camel.model.RouteDefinition;
import org.apache.camel.spi.RoutePolicy;

/**
 * Camel's own route meters ({@code camel_exchanges_*}, {@code camel_route_policy_seconds}, tagged {@code routeId}),
 * which stock Camel dashboards read, for every route except those that answer an HTTP request: the webhook's ack
 * path is measured by the bundle's own meters ({@code metakit_webhook_*}, counted from finished exchanges), because
 * per-exchange meter work there costs throughput (BENCHMARKS.md, history, 2026-12-02). The routes are told by
 * their consumer, not their id, so an integrator who renames the ingest route keeps it off the ack path's meters.
 * <p>
 * camel-main's own switch ({@code camel.metrics.enable-route-policy}) times every route or none, so it stays off and
 * this factory, a bean of {@code routes/beans.camel.yaml}, is picked up as any {@code RoutePolicyFactory} bean is.
 */
public class CamelRouteMetrics extends MicrometerRoutePolicyFactory {
    /** the scheme of the routes that answer HTTP: the webhook's (routes/ingest.camel.yaml) */
    public static final String ACK_PATH_SCHEME = "platform-http:";

    @Override
    public RoutePolicy createRoutePolicy(CamelContext camelContext, String routeId, NamedNode route) {
        return answersHttp(route) ? null : super.createRoutePolicy(camelContext, routeId, route);
    }

    static boolean answersHttp(NamedNode route) {
        if (route instanceof RouteDefinition definition && definition.getInput() != null) {
            String uri = definition.getInput().getEndpointUri();
            return uri != null && uri.startsWith(ACK_PATH_SCHEME);
        }
        return false;
    }
}
