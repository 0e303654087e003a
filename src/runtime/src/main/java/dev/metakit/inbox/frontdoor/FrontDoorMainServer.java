package dev.metakit.inbox.frontdoor;

import org.apache.camel.component.platform.http.PlatformHttpConstants;
import org.apache.camel.component.platform.http.main.MainHttpServer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;
import org.apache.camel.support.service.ServiceHelper;

import java.util.function.Supplier;

/**
 * camel-main's public HTTP server with a {@link FrontDoorServer} inside instead of Camel's plain one; everything
 * else (router lookup, endpoint summary, dev console) is camel-main's.
 */
final class FrontDoorMainServer extends MainHttpServer {
    private final FrontDoorLimits limits;
    private final Supplier<FrontDoorEvents> events;
    private FrontDoorServer server;

    FrontDoorMainServer(FrontDoorLimits limits, Supplier<FrontDoorEvents> events) {
        this.limits = limits;
        this.events = events;
    }

    @Override
    protected void doInit() throws Exception {
        // not super.doInit(): that creates Camel's own server, which cannot be given the limits
        getConfiguration().setServerType(VertxPlatformHttpRouter.SERVER_TYPE_SERVER);
        server = new FrontDoorServer(getConfiguration(), limits, events);
        getCamelContext().addService(server);
        // platform-http takes the engine from the registry before its own: routes served here route asynchronously
        getCamelContext().getRegistry().bind(PlatformHttpConstants.PLATFORM_HTTP_ENGINE_NAME, new AsyncRoutingEngine());
    }

    @Override
    protected void doStart() throws Exception {
        // before super.doStart(), which looks up the router the server binds when it starts
        ServiceHelper.startService(server);
        super.doStart();
    }

    FrontDoorServer server() {
        return server;
    }
}
