package dev.metakit.inbox.routefiles;

import dev.metakit.inbox.config.WhenFullyStarted;
import dev.metakit.inbox.ops.CamelRouteMetrics;
import org.apache.camel.CamelContext;
import org.apache.camel.Consumer;
import org.apache.camel.Route;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.MainListenerSupport;
import org.apache.camel.spi.Resource;
import org.apache.camel.spi.ResourceReload;
import org.apache.camel.spi.ShutdownStrategy;
import org.apache.camel.support.RouteWatcherReloadStrategy;
import org.apache.camel.support.service.ServiceHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The standalone run's route files: loaded by {@link RouteFileLoader} (a file without routes is a file left out), and,
 * with camel-main's route reload on, answered when saved.
 *
 * <p>A save into a running bundle's watched route files (camel-main's route reload) that cannot be loaded is answered in
 * one WARN line naming the file, the line and the parser's words; the routes it held run on as they were. Camel
 * itself logs such a save as "Error reloading routes ... Error pre-parsing resource" with a stack trace, and neither
 * the line nor the problem.
 *
 * <p>A file found empty (no byte) is most often an editor's save caught between emptying the file and writing it: it
 * loads once written. Still empty a moment later, it is a file without routes ({@link NoRoutes}).
 */
public final class RouteFiles extends MainListenerSupport {
    private static final Logger LOG = LoggerFactory.getLogger(RouteFiles.class);
    /** how long a file found empty is given to be written before it counts as emptied */
    private static final long SETTLE_MILLIS = 500;

    /**
     * Before camel-main loads the route files: Camel takes a YAML loader from the registry before its own. Once the
     * context has started (camel-main's reload watcher with it), its saves are answered here.
     */
    @Override
    public void beforeConfigure(BaseMainSupport main) {
        CamelContext context = main.getCamelContext();
        RouteFileLoader loader = new RouteFileLoader();
        loader.setCamelContext(context);
        ServiceHelper.startService(loader);
        context.getRegistry().bind("routeFileLoader", loader);
        WhenFullyStarted.run(context, RouteFiles::answerSaves);
    }

    private static void answerSaves(CamelContext context) {
        RouteWatcherReloadStrategy reload = context.hasService(RouteWatcherReloadStrategy.class);
        if (reload == null || reload.getResourceReload() == null) {
            return; // reload off: an edit reaches the bundle at its next start
        }
        ReloadSafeRouteChecks.replaceCamels(context);
        ResourceReload camels = reload.getResourceReload();
        Map<Path, String> loaded = new ConcurrentHashMap<>();
        reload.setResourceReload((name, resource) -> onSave(context, camels, loaded, name, resource));
    }

    /**
     * One save, one reload: an editor's save (empty the file, write it) is often two change events, and the second,
     * read after the first was reloaded, finds the same text. Reloading it again would swap its routes once more (for
     * the ingest route, another moment of 503), and a file that does not load would be told twice.
     */
    private static void onSave(CamelContext context, ResourceReload camels, Map<Path, String> loaded, String name,
                               Resource resource) throws Exception {
        Path file = Path.of(name);
        if (isEmpty(file) && !writtenWithin(file, SETTLE_MILLIS)) {
            // emptied on purpose: as a file without routes, at the next start as now
            loaded.remove(file);
            new NoRoutes(resource).updateRoutesToCamelContext(context);
            return;
        }
        String text = textOf(file);
        if (text.equals(loaded.put(file, text))) {
            LOG.debug("Route file {} saved again unchanged: its last reload stands", file);
            return;
        }
        Runnable restart = stopTheWebhooksRouteAhead(context, resource);
        try {
            camels.onReload(name, resource);
        } catch (Exception e) {
            restart.run();
            String why = RouteFileError.describe(e).orElse(RouteFileError.shortName(resource.getLocation()) + ": "
                    + e.getMessage());
            LOG.warn("{}. Not reloaded: its routes run as before until the file is saved again", why);
            // not rethrown: Camel would report it once more, with a stack trace and without the line
        }
    }

    /**
     * The webhook's route, when {@code resource} holds it, stopped ahead of Camel's replacement: its consumer first (a
     * delivery arriving then is answered 503 with Retry-After by the front door), then its deliveries in flight let
     * finish, looked at every 10 ms. Camel's own stop of a route with an exchange in flight looks again only once a
     * second, which would leave the webhook's path that long without its route. Returns what starts the consumer
     * again, for a file that does not load after all.
     */
    private static Runnable stopTheWebhooksRouteAhead(CamelContext context, Resource resource)
            throws InterruptedException {
        List<Consumer> stopped = new ArrayList<>();
        ShutdownStrategy shutdown = context.getShutdownStrategy();
        long patience = shutdown.getTimeUnit().toNanos(shutdown.getTimeout());
        for (Route route : context.getRoutes()) {
            if (route.getSourceResource() == null || !resource.getLocation().equals(route.getSourceResource().getLocation())
                    || !route.getEndpoint().getEndpointUri().startsWith(CamelRouteMetrics.ACK_PATH_SCHEME)) {
                continue;
            }
            Consumer consumer = route.getConsumer();
            ServiceHelper.stopService(consumer);
            stopped.add(consumer);
            long until = System.nanoTime() + patience;
            while (context.getInflightRepository().size(route.getRouteId()) > 0 && System.nanoTime() < until) {
                Thread.sleep(10);
            }
        }
        return () -> stopped.forEach(ServiceHelper::startService);
    }

    /** The file's text; for a file gone meanwhile none, and Camel's reload says what it says of a missing file. */
    private static String textOf(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException gone) {
            return "";
        }
    }

    private static boolean isEmpty(Path file) {
        try {
            return Files.exists(file) && Files.size(file) == 0;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether an empty file gets its text within {@code millis} (an editor's save in two writes): then it loads. */
    private static boolean writtenWithin(Path file, long millis) throws InterruptedException {
        long until = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < until) {
            if (!isEmpty(file)) {
                return true;
            }
            Thread.sleep(50);
        }
        return !isEmpty(file);
    }
}
