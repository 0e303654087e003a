package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ReadinessCheck;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.config.WhenFullyStarted;
import dev.metakit.inbox.ingest.StoreGate;
import org.apache.camel.CamelContext;
import org.apache.camel.Route;
import org.apache.camel.ServiceStatus;
import org.apache.camel.StatefulService;
import org.apache.camel.component.platform.http.PlatformHttpEndpoint;
import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.spi.ResourceReload;
import org.apache.camel.spi.ResourceReloadStrategy;
import org.apache.camel.spi.ShutdownStrategy;
import org.apache.camel.support.EventNotifierSupport;
import org.apache.camel.support.service.ServiceHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The bundle says when it is incomplete, whatever hosts it: a bean of routes/beans.camel.yaml, so camel-main, Spring
 * Boot, Quarkus and a plain CamelContext that load that file all get it, with no host code. Once the
 * CamelContext has started it checks that every {@link EssentialRoute} is there and started (but those the integrator
 * names in {@code metakit.routes.replaced}); if one is not, one ERROR line says which and how to register it, and
 * until it runs:
 * <ul>
 * <li>readiness is DOWN (this is a readiness {@link org.apache.camel.health.HealthCheck}, found in the registry as the
 * database check is), its message and details naming the routes;</li>
 * <li>the ingest route's store step refuses deliveries ({@link StoreGate}), answered 503 so MetaKit retries. Why
 * refuse rather than store: readiness DOWN already tells a load balancer to send nothing here, and a 200 would tell
 * MetaKit its delivery is handled while nothing would work it (or repair it, or publish it); a 503 keeps MetaKit's
 * own retries and its lastDeliveryStatus for the window the operator needs to fix the deployment, and what MetaKit
 * gives up on meanwhile is what the full reconcile repairs from the REST API once the bundle is complete. Durability
 * holds either way: nothing is answered 2xx without its committed row.</li>
 * </ul>
 * A route stopped or removed later (JMX, the route controller, a reload that did not bring it back) does the same once
 * the routes have been settled with it away for {@link #RUNTIME_GRACE_MILLIS}: a route file's reload stops, removes,
 * adds and starts its routes one after the other, and while it does the routes left in place go on storing (the inbox
 * table holds what arrives for the worker and the feed to take up when their routes are back), so a save is no outage
 * and no news, however long the reload takes. Settled means no route event for the grace, no reload under way (Camel's
 * route reload, watched) and no route of the context being stopped: a reload's stop waits for the exchanges in flight
 * on each route it replaces (a slow outlet's call, up to the shutdown timeout), and on a loaded machine its steps come
 * seconds apart. The bundle says when it is complete again. The check reads route state on Camel's route events (and
 * again while a route is away, since a route's started event can come before its status says so), off the ack path:
 * the store step reads one field.
 */
public class EssentialRoutesCheck extends ReadinessCheck implements StoreGate {
    private static final Logger LOG = LoggerFactory.getLogger(EssentialRoutesCheck.class);
    static final String STARTING = "metakit-inbox is starting";
    static final String STOPPING = "metakit-inbox is stopping";
    static final String MISSING = "missing";
    static final String STOPPED = "stopped";
    /**
     * How long the routes must have been settled (no route event, no reload under way, none starting or stopping) with
     * an essential one missing or stopped at runtime before readiness, the store step and the ERROR line say so: a
     * route file's reload is no news.
     */
    public static final long RUNTIME_GRACE_MILLIS = 2000;
    /** while a route is away, how often its state is read again */
    private static final long RECHECK_MILLIS = 250;

    private String webhookPath;
    private String replaced;
    private Set<EssentialRoute> replacedRoutes;
    private RouteEvents notifier;
    /** null while every essential route runs; read by the store step for every delivery */
    private volatile String refusal = STARTING;
    private volatile boolean contextStarted;
    private boolean contextStopping;
    /** the refusal the last ERROR line reported, null when none or the bundle was complete since */
    private String reported;
    /** the routes the last ERROR line named */
    private Set<String> reportedRoutes = Set.of();
    /** System.nanoTime() when a route went away at runtime, while one is away */
    private Long awaySince;
    /** System.nanoTime() of the context's last route event or reload's end */
    private long lastRouteEvent = System.nanoTime();
    /** route reloads under way (Camel's route reload, watched from the context's start) */
    private int reloading;
    private boolean recheckScheduled;
    private ScheduledExecutorService later;

    public EssentialRoutesCheck() {
        super("essential-routes");
    }

    /** The initMethod: refuses an unknown route name, and listens to the context's route events from now on. */
    public void startWithContext() {
        Required.setting(webhookPath, "metakit.webhook.path");
        replacedRoutes = EssentialRoute.parseReplaced(Required.setting(replaced, "metakit.routes.replaced"));
        notifier = new RouteEvents();
        CamelContext context = getCamelContext();
        later = context.getExecutorServiceManager().newSingleThreadScheduledExecutor(this, "EssentialRoutesCheck");
        context.getManagementStrategy().addEventNotifier(notifier);
        if (context.isStarted()) {
            // a bean added to a running context: there is no start event to wait for
            ServiceHelper.startService(notifier);
            watchReloads(context);
            started();
            return;
        }
        WhenFullyStarted.run(context, this::watchReloads);
    }

    /**
     * With Camel's route reload on (a dev run), each reload is under way from the save's change to its last route
     * started, and the routes it replaces are away meanwhile: no news, however long its steps take on a loaded machine
     * (it stops, removes, adds and starts them one after the other, with no route event while it builds the new ones).
     * The reload itself is Camel's, called as before.
     */
    private void watchReloads(CamelContext context) {
        if (notifier == null) {
            return; // closed: camel-main's throwaway copy
        }
        for (ResourceReloadStrategy strategy : context.hasServices(ResourceReloadStrategy.class)) {
            ResourceReload camels = strategy.getResourceReload();
            if (camels != null) {
                strategy.setResourceReload((name, resource) -> {
                    reloadBegins();
                    try {
                        camels.onReload(name, resource);
                    } finally {
                        reloadEnds();
                    }
                });
            }
        }
    }

    private synchronized void reloadBegins() {
        reloading++;
    }

    private synchronized void reloadEnds() {
        reloading--;
        lastRouteEvent = System.nanoTime();
        evaluate();
    }

    /** The destroyMethod (also of camel-main's throwaway copy, which never sees the context start). */
    public void close() {
        if (notifier != null) {
            getCamelContext().getManagementStrategy().removeEventNotifier(notifier);
            ServiceHelper.stopService(notifier);
            notifier = null;
        }
        if (later != null) {
            getCamelContext().getExecutorServiceManager().shutdown(later);
            later = null;
        }
    }

    @Override
    public String refusal() {
        return refusal;
    }

    @Override
    protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
        String why = evaluate();
        if (why == null) {
            builder.up();
            return;
        }
        builder.message(why);
        if (contextStarted) {
            gaps().forEach((state, routes) -> builder.detail(state, String.join(",", routes)));
        }
        builder.down();
    }

    /** At startup the verdict is told at once. */
    private synchronized void started() {
        contextStarted = true;
        refusal = describe(gaps());
        report();
    }

    /**
     * Reads the routes' state now. At runtime a route away counts once the routes have been settled with it away for
     * the grace (a reload under way is not settled): until then readiness and the store step go on as before, and the
     * state is read again meanwhile.
     */
    private synchronized String evaluate() {
        if (contextStopping) {
            return refusal = STOPPING;
        }
        CamelContext context = getCamelContext();
        if (!contextStarted || context == null) {
            return refusal = STARTING;
        }
        String now = describe(gaps());
        if (now == null) {
            awaySince = null;
            refusal = null;
            if (reported != null) {
                LOG.info("metakit-inbox is complete again: every essential route runs");
                reported = null;
            }
            return null;
        }
        long t = System.nanoTime();
        if (awaySince == null) {
            awaySince = t;
        }
        long grace = TimeUnit.MILLISECONDS.toNanos(RUNTIME_GRACE_MILLIS);
        long settledFor = Math.min(t - awaySince, t - lastRouteEvent);
        boolean changing = reloading > 0 || aRouteInTransition(context);
        if (refusal != null || settledFor >= grace && (!changing || t - awaySince >= grace + 2 * stopBound(context))) {
            refusal = now;
            report();
        }
        recheck();
        return refusal;
    }

    /**
     * Whether a route of the context is starting or being stopped: Camel's stop of a route suspends its consumer, then
     * waits for the route's exchanges in flight with the route still started (up to the shutdown timeout,
     * {@link #stopBound}).
     */
    private static boolean aRouteInTransition(CamelContext context) {
        for (Route route : context.getRoutes()) {
            ServiceStatus status = context.getRouteController().getRouteStatus(route.getRouteId());
            if (status != null && (status.isStopping() || status.isStarting() || status.isStarted()
                    && route.getConsumer() instanceof StatefulService consumer && !consumer.getStatus().isStarted())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The longest a route's stop waits for its exchanges in flight: past twice that (a reload's stop, then its routes
     * built and started), a stop or reload under way is no longer a reason to wait, so one that hangs is told.
     */
    private static long stopBound(CamelContext context) {
        ShutdownStrategy shutdown = context.getShutdownStrategy();
        return shutdown.getTimeUnit().toNanos(shutdown.getTimeout());
    }

    private static String describe(Map<String, List<String>> gaps) {
        return gaps.isEmpty() ? null
                : "metakit-inbox is incomplete, "
                + gaps.entrySet().stream().map(e -> e.getKey() + ": " + String.join(", ", e.getValue()))
                .collect(Collectors.joining("; "));
    }

    private void recheck() {
        if (!recheckScheduled && later != null) {
            recheckScheduled = true;
            try {
                later.schedule(() -> {
                    synchronized (this) {
                        recheckScheduled = false;
                    }
                    evaluate();
                }, RECHECK_MILLIS, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                recheckScheduled = false; // closing: the context is going away with its routes
            }
        }
    }

    /**
     * One ERROR line for an incompleteness not told yet: which routes, and how to register each. A route of those told
     * that is on its way back (added, not started yet) is no news.
     */
    private synchronized void report() {
        String now = refusal;
        if (now == null || contextStopping || !contextStarted || now.equals(reported)) {
            return;
        }
        Set<String> away = gaps().values().stream().flatMap(List::stream).collect(Collectors.toSet());
        if (reported != null && reportedRoutes.containsAll(away)) {
            return;
        }
        reportedRoutes = away;
        LOG.error("{}. Readiness is DOWN and deliveries are answered 503 until they run: {}. A route replaced on"
                + " purpose is named in METAKIT_ROUTES_REPLACED (metakit.routes.replaced)", now, remedies(gaps()));
        reported = now;
    }

    /** "missing" and "stopped" → the route ids, for the message and the health details. */
    private Map<String, List<String>> gaps() {
        Map<String, List<String>> gaps = new LinkedHashMap<>();
        for (EssentialRoute essential : EssentialRoute.values()) {
            if (replacedRoutes.contains(essential)) {
                continue;
            }
            Route route = find(essential);
            if (route == null) {
                gaps.computeIfAbsent(MISSING, k -> new ArrayList<>()).add(essential.routeId());
            } else {
                ServiceStatus status = getCamelContext().getRouteController().getRouteStatus(route.getRouteId());
                if (status == null || !status.isStarted()) {
                    gaps.computeIfAbsent(STOPPED, k -> new ArrayList<>()).add(route.getRouteId());
                }
            }
        }
        return gaps;
    }

    private Route find(EssentialRoute essential) {
        CamelContext context = getCamelContext();
        if (essential == EssentialRoute.INGEST) {
            // integrators may rename the ingest route: it is the one consuming the webhook's path
            for (Route route : context.getRoutes()) {
                if (route.getEndpoint() instanceof PlatformHttpEndpoint http && webhookPath.equals(http.getPath())) {
                    return route;
                }
            }
        }
        return context.getRoute(essential.routeId());
    }

    /** How to register each missing route, once per route file or builder; and to start a stopped one. */
    private String remedies(Map<String, List<String>> gaps) {
        Set<String> remedies = new LinkedHashSet<>();
        for (String missing : gaps.getOrDefault(MISSING, List.of())) {
            EssentialRoute.byId(missing).ifPresent(r -> remedies.add(r.howToRegister()));
        }
        if (gaps.containsKey(STOPPED)) {
            remedies.add("start the stopped ones again (route controller, JMX)");
        }
        return String.join("; ", remedies);
    }

    public void setWebhookPath(String webhookPath) {
        this.webhookPath = webhookPath;
    }

    /** comma-separated ids of essential routes this deployment replaces or leaves out on purpose (blank: none) */
    public void setReplaced(String replaced) {
        this.replaced = replaced;
    }

    /** Route and context events only: nothing on the exchanges, so the ack path pays nothing for the check. */
    private final class RouteEvents extends EventNotifierSupport {
        RouteEvents() {
            setIgnoreExchangeEvents(true);
            setIgnoreStepEvents(true);
            setIgnoreServiceEvents(true);
        }

        @Override
        public void notify(CamelEvent event) {
            switch (event.getType()) {
                case CamelContextStarted -> started();
                case CamelContextStopping -> stopping();
                case RouteAdded, RouteRemoved, RouteStarting, RouteStarted, RouteStopping, RouteStopped,
                     RouteReloaded -> routeEvent();
                default -> {
                }
            }
        }
    }

    private synchronized void routeEvent() {
        lastRouteEvent = System.nanoTime();
        evaluate();
    }

    private synchronized void stopping() {
        contextStopping = true;
        refusal = STOPPING;
    }
}
