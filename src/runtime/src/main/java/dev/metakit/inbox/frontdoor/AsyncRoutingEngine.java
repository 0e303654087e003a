package dev.metakit.inbox.frontdoor;

import org.apache.camel.Processor;
import org.apache.camel.component.platform.http.PlatformHttpEndpoint;
import org.apache.camel.component.platform.http.spi.PlatformHttpConsumer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpEngine;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;

/**
 * The platform-http engine of the front door: Camel's Vert.x engine, whose consumers run each route on the event
 * loop that read the request, with Camel's asynchronous routing, instead of parking a worker thread per request
 * until the route ends ({@link AsyncRoutingConsumer}). The routes do not change: they still say
 * {@code platform-http:}, and on a host platform its own engine serves them.
 */
final class AsyncRoutingEngine extends VertxPlatformHttpEngine {
    @Override
    public PlatformHttpConsumer createConsumer(PlatformHttpEndpoint endpoint, Processor processor) {
        return new AsyncRoutingConsumer(endpoint, processor, getHandlers(),
                VertxPlatformHttpRouter.getRouterNameFromPort(getServerPort()));
    }
}
