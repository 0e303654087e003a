package dev.metakit.inbox.routefiles;

import org.apache.camel.CamelContext;
import org.apache.camel.NonManagedService;
import org.apache.camel.Route;
import org.apache.camel.StaticService;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckRegistry;
import org.apache.camel.health.HealthCheckRepository;
import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.camel.impl.health.ConsumerHealthCheck;
import org.apache.camel.impl.health.RouteHealthCheck;
import org.apache.camel.support.service.ServiceSupport;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Camel's per-route readiness checks ({@code camel.health.routes-enabled}, {@code camel.health.consumers-enabled}),
 * safe to read while a saved route file's routes are swapped. Camel 4.18's own repositories list the routes, then read
 * each one's status: a route removed in between has none, its check throws a NullPointerException, and readiness
 * answers 500 with an ERROR of Camel's. Here such a route is left out of that reading (UNKNOWN, which counts neither up
 * nor down): whether the bundle's essential routes are back is the bundle's own readiness check's to say. Every other
 * route is checked by Camel's own checks.
 */
public final class ReloadSafeRouteChecks extends ServiceSupport
        implements HealthCheckRepository, StaticService, NonManagedService {
    /** Camel's ids of the two repositories, kept so that their settings and exclusions still apply */
    static final String ROUTES = "routes";
    static final String CONSUMERS = "consumers";

    private final String id;
    private final Function<Route, HealthCheck> checkOf;
    private final Map<Route, HealthCheck> checks = new ConcurrentHashMap<>();
    /** the context whose routes are checked, the one these checks are put in */
    private final CamelContext context;
    private boolean enabled = true;

    private ReloadSafeRouteChecks(CamelContext context, String id, Function<Route, HealthCheck> checkOf) {
        this.context = context;
        this.id = id;
        this.checkOf = checkOf;
    }

    /** Puts these checks in place of Camel's, each with Camel's on/off setting; none where Camel's are not registered. */
    static void replaceCamels(CamelContext context) {
        replace(context, new ReloadSafeRouteChecks(context, ROUTES, RouteCheck::new));
        replace(context, new ReloadSafeRouteChecks(context, CONSUMERS, ConsumerCheck::new));
    }

    private static void replace(CamelContext context, ReloadSafeRouteChecks safe) {
        HealthCheckRegistry registry = HealthCheckRegistry.get(context);
        Optional<HealthCheckRepository> camels = registry == null ? Optional.empty() : registry.getRepository(safe.id);
        if (camels.isEmpty() || camels.get() instanceof ReloadSafeRouteChecks) {
            return;
        }
        safe.setEnabled(camels.get().isEnabled());
        registry.unregister(camels.get());
        registry.register(safe);
    }

    @Override
    public Stream<HealthCheck> stream() {
        if (!enabled) {
            return Stream.empty();
        }
        List<Route> routes = context.getRoutes();
        checks.keySet().retainAll(routes); // a removed route's check goes with it
        return routes.stream().filter(r -> r.getId() != null).map(r -> checks.computeIfAbsent(r, checkOf));
    }

    @Override
    public String getId() {
        return id;
    }

    @Override
    public boolean isEnabled() {
        return enabled;
    }

    @Override
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** Runs Camel's check of {@code route}, unless the route is removed before or while it reads. */
    private static void unlessRemoved(Route route, HealthCheckResultBuilder builder, Runnable camels) {
        if (removed(route)) {
            removedMeanwhile(route, builder);
            return;
        }
        try {
            camels.run();
        } catch (NullPointerException e) {
            if (!removed(route)) {
                throw e;
            }
            removedMeanwhile(route, builder); // removed between the look above and Camel's own
        }
    }

    private static boolean removed(Route route) {
        return route.getCamelContext().getRouteController().getRouteStatus(route.getId()) == null;
    }

    private static void removedMeanwhile(Route route, HealthCheckResultBuilder builder) {
        builder.detail("route.id", route.getId()).message("Route " + route.getId() + " was removed while read")
                .unknown();
    }

    /** Camel's check of a route. */
    static final class RouteCheck extends RouteHealthCheck {
        private final Route route;

        RouteCheck(Route route) {
            super(route);
            this.route = route;
            setCamelContext(route.getCamelContext());
        }

        @Override
        protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
            unlessRemoved(route, builder, () -> super.doCall(builder, options));
        }
    }

    /** Camel's check of a route's consumer. */
    static final class ConsumerCheck extends ConsumerHealthCheck {
        private final Route route;

        ConsumerCheck(Route route) {
            super(route, "consumer:" + route.getRouteId());
            this.route = route;
            setCamelContext(route.getCamelContext());
        }

        @Override
        protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
            unlessRemoved(route, builder, () -> super.doCall(builder, options));
        }
    }
}
