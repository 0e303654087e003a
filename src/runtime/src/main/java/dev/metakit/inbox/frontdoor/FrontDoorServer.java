package dev.metakit.inbox.frontdoor;

import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpServerConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * camel-main's public platform-http server (Vert.x) with the limits Camel 4.18 does not expose: Camel's server builds
 * its {@link HttpServerOptions} itself and offers no setting for timeouts or connection caps, so this subclass
 * creates the listening server with them and serves Camel's own router (routes, body handler and all) through it.
 *
 * <ul>
 *   <li>idle connections close after {@link FrontDoorLimits#idleTimeoutSeconds()} (Vert.x's idle timeout);</li>
 *   <li>a request must be read whole within {@link FrontDoorLimits#requestReadTimeoutMillis()} of its first byte,
 *       at most {@link FrontDoorLimits#maxConnections()} connections are open, half-sent large bodies share a
 *       memory budget ({@link ConnectionGuard});</li>
 *   <li>Content-Length beside chunked is answered 400 and closed ({@link StrictRequestDecoder});</li>
 *   <li>HTTP/1.1 only (no h2c upgrade): the guard understands HTTP/1.1 framing, and MetaKit sends nothing else;</li>
 *   <li>a client that hangs up mid-request is counted and logged at DEBUG instead of Vert.x's ERROR with a stack
 *       trace.</li>
 * </ul>
 */
final class FrontDoorServer extends VertxPlatformHttpServer {
    private static final Logger LOG = LoggerFactory.getLogger(FrontDoorServer.class);
    /** the names Vert.x 4.5 gives the HTTP/1.x request decoder and its connection handler in a channel pipeline */
    private static final String VERTX_DECODER = "httpDecoder";
    private static final String VERTX_HANDLER = "handler";
    /**
     * The statuses Vert.x Web gives a failure no route handled, each of which it would log at ERROR: 200 is what
     * its body handler fails with when the request breaks off (a client hanging up), 400 a body that cannot be
     * decoded, 413 a body over the limit, 500 anything else.
     */
    private static final int[] UNHANDLED_FAILURE_STATUSES = {200, 400, 413, 500};
    private static final String WEBHOOK_PATH = "metakit.webhook.path";
    private static final String RETRY_AFTER = "Retry-After";

    private final VertxPlatformHttpServerConfiguration configuration;
    private final FrontDoorLimits limits;
    private final Supplier<FrontDoorEvents> events;
    private final ConnectionGuard guard;
    private final List<HttpServer> listening = new CopyOnWriteArrayList<>();

    FrontDoorServer(VertxPlatformHttpServerConfiguration configuration, FrontDoorLimits limits,
                    Supplier<FrontDoorEvents> events) {
        super(configuration);
        this.configuration = configuration;
        this.limits = limits;
        this.events = events;
        this.guard = new ConnectionGuard(limits, events);
    }

    @Override
    protected void startServer() throws Exception {
        if (configuration.isUseGlobalSslContextParameters() || configuration.getSslContextParameters() != null) {
            throw new IllegalStateException("the webhook server does not terminate TLS itself: terminate it in front "
                    + "(load balancer, ingress) and leave camel.server.use-global-ssl-context-parameters off");
        }
        HttpServerOptions options = new HttpServerOptions()
                .setIdleTimeout(limits.idleTimeoutSeconds())
                .setIdleTimeoutUnit(TimeUnit.SECONDS)
                .setHttp2ClearTextEnabled(false);
        VertxPlatformHttpRouter camelRouter = VertxPlatformHttpRouter.lookup(getCamelContext(),
                VertxPlatformHttpRouter.getRouterNameFromPort(configuration.getPort()));
        Router root = camelRouter;
        String path = configuration.getPath();
        if (path != null && !path.isEmpty() && !"/".equals(path)) {
            root = Router.router(getVertx());
            root.route(path.endsWith("/") ? path + "*" : path + "/*").subRouter(camelRouter);
        }
        for (int status : UNHANDLED_FAILURE_STATUSES) {
            root.errorHandler(status, this::unhandledFailure);
        }
        answerRetryWhileTheIngestRouteIsSwapped(camelRouter, root);

        // one server per event loop on the same port: Vert.x hands the accepted connections round-robin to them, so
        // HTTP parsing and answering use every core instead of the one loop a single server is bound to
        // port 0 (any free port): Vert.x shares a random port only among servers that ask for the same negative port
        int requested = configuration.getBindPort() == 0 ? -1 : configuration.getBindPort();
        int port = requested;
        for (int i = 0; i < eventLoops(); i++) {
            HttpServer server = listenOnOwnEventLoop(options, root, requested);
            listening.add(server);
            port = server.actualPort();
        }
        LOG.info("Webhook server listening on {}:{} with {} event loops (request read within {} ms, idle connections "
                        + "closed after {} s, at most {} connections)", configuration.getBindHost(), port,
                listening.size(), limits.requestReadTimeoutMillis(), limits.idleTimeoutSeconds(),
                limits.maxConnections());
    }

    private static int eventLoops() {
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * A server created and bound from a new event-loop context: Vert.x binds each server's connections to the
     * context that listened, and a context created outside Vert.x takes the next event loop of the pool.
     */
    private HttpServer listenOnOwnEventLoop(HttpServerOptions options, Router root, int port) throws Exception {
        CompletableFuture<HttpServer> bound = new CompletableFuture<>();
        ((VertxInternal) getVertx()).createEventLoopContext().runOnContext(v -> {
            HttpServer server = getVertx().createHttpServer(options);
            server.connectionHandler(connection -> guard(connection, options));
            server.requestHandler(root).listen(port, configuration.getBindHost())
                    .onComplete(r -> {
                        if (r.succeeded()) {
                            bound.complete(r.result());
                        } else {
                            bound.completeExceptionally(r.cause());
                        }
                    });
        });
        return bound.get(30, TimeUnit.SECONDS);
    }

    private void guard(HttpConnection connection, HttpServerOptions options) {
        var pipeline = ((ConnectionBase) connection).channel().pipeline();
        pipeline.replace(VERTX_DECODER, VERTX_DECODER, new StrictRequestDecoder(options));
        guard.admit(pipeline, VERTX_DECODER, VERTX_HANDLER);
    }

    /** Runs instead of Vert.x's ERROR line; Vert.x still answers (when the connection is open) after it. */
    /**
     * A reload of the ingest route's file removes the route and adds its new version: in between (under a second) the
     * webhook's path has no route, or one whose consumer is stopping. A delivery then is answered 503 with
     * Retry-After, which MetaKit retries, never a 404 it would take for a wrong URL. A consumer that is stopping
     * answers a bare 503, or a bare 500 when the exchange it had begun is refused as the route stops (before the
     * route's own error answers can run): both are that same 503.
     */
    private void answerRetryWhileTheIngestRouteIsSwapped(Router camelRouter, Router root) {
        String webhookPath = getCamelContext().resolvePropertyPlaceholders("{{" + WEBHOOK_PATH + "}}");
        camelRouter.route(webhookPath).order(Integer.MIN_VALUE).handler(ctx -> {
            ctx.addHeadersEndHandler(v -> {
                int status = ctx.response().getStatusCode();
                if ((status == 503 || status == 500) && !ctx.response().headers().contains(RETRY_AFTER)) {
                    if (status == 500) {
                        LOG.debug("A delivery refused by the ingest route's consumer as it stopped: answered 503");
                        ctx.response().setStatusCode(503);
                    }
                    ctx.response().putHeader(RETRY_AFTER, "1");
                }
            });
            ctx.next();
        });
        root.errorHandler(404, ctx -> {
            if (webhookPath.equals(ctx.request().path())) {
                ctx.response().setStatusCode(503).putHeader(RETRY_AFTER, "1").putHeader("Content-Type", "text/plain")
                        .end("inbox reloading its route, retry later");
            } else {
                ctx.response().setStatusCode(404).end();
            }
        });
    }

    private void unhandledFailure(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        if (failure instanceof HttpClosedException || ctx.response().closed()) {
            if (!ConnectionGuard.cutByGuard(((ConnectionBase) ctx.request().connection()).channel())) {
                events.get().clientClosed(); // the guard counted its own cuts already
            }
            LOG.debug("Client closed the connection before its request was read: {}", String.valueOf(failure));
        } else if (ctx.statusCode() >= 500) {
            LOG.error("Unhandled exception in the webhook server", failure);
        } else {
            // a 400 or 413 for what the client sent: its answer says so, our log need not
            LOG.debug("Request refused with {}: {}", ctx.statusCode(), String.valueOf(failure));
        }
    }

    /** the listening server: platform-http's engine finds the main server's port through it */
    @Override
    public HttpServer getServer() {
        return listening.isEmpty() ? null : listening.get(0);
    }

    @Override
    public int getPort() {
        HttpServer s = getServer();
        return s != null ? s.actualPort() : super.getPort();
    }

    @Override
    protected void stopServer() {
        for (HttpServer s : listening) {
            try {
                s.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("Webhook server did not close cleanly: {}", e.getMessage());
            }
        }
        listening.clear();
    }

    /**
     * Closes the Vert.x instance when Camel's server would: when it created it itself, none being in the registry (a
     * Vert.x the registry holds belongs to whoever bound it). Camel's own version runs this on the executor its
     * {@code startServer} creates, which this server does not need.
     */
    @Override
    protected void stopVertx() {
        var vertx = getVertx();
        if (vertx != null && vertx != lookupVertx()) {
            try {
                vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("Vert.x did not close cleanly: {}", e.getMessage());
            }
        }
    }

    ConnectionGuard guard() {
        return guard;
    }
}
