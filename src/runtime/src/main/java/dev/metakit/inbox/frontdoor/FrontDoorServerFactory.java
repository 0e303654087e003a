package dev.metakit.inbox.frontdoor;

import org.apache.camel.CamelContext;
import org.apache.camel.CamelContextAware;
import org.apache.camel.Service;
import org.apache.camel.component.platform.http.main.DefaultMainHttpServerFactory;
import org.apache.camel.component.platform.http.main.MainHttpServer;
import org.apache.camel.main.HttpManagementServerConfigurationProperties;
import org.apache.camel.main.HttpServerConfigurationProperties;

/**
 * Makes camel-main's public server ({@code camel.server.*}) a {@link FrontDoorMainServer}. camel-main takes a
 * {@code MainHttpServerFactory} from the registry before its own, so declaring this bean is all it takes; the
 * management server ({@code camel.management.*}) stays Camel's own, and on a host platform (no camel-main server)
 * the bean is simply unused. Camel's factory still reads the {@code camel.server.*} settings; this one only swaps the
 * server class.
 *
 * <p>The front door knows nothing of what it serves: who counts its events ({@link #events}) is given by a subclass,
 * the standalone runtime's wiring.
 */
public class FrontDoorServerFactory implements org.apache.camel.main.MainHttpServerFactory, CamelContextAware {
    private final DefaultMainHttpServerFactory camelFactory = new DefaultMainHttpServerFactory();
    private CamelContext camelContext;
    private int idleTimeoutSeconds = 60;
    private long requestReadTimeoutMillis = 10_000;
    private int maxConnections = 1024;
    private long maxPendingBodyBytes = 64L * 1024 * 1024;
    private String eventsBean = "frontDoorEvents";

    @Override
    public Service newHttpServer(CamelContext context, HttpServerConfigurationProperties properties) {
        MainHttpServer configured = (MainHttpServer) camelFactory.newHttpServer(context, properties);
        FrontDoorMainServer server = new FrontDoorMainServer(limits(), () -> events(context));
        server.setCamelContext(context);
        server.setConfiguration(configured.getConfiguration());
        server.setStaticEnabled(configured.isStaticEnabled());
        server.setStaticContextPath(configured.getStaticContextPath());
        server.setStaticSourceDir(configured.getStaticSourceDir());
        return server;
    }

    @Override
    public Service newHttpManagementServer(CamelContext context,
                                           HttpManagementServerConfigurationProperties properties) {
        return camelFactory.newHttpManagementServer(context, properties);
    }

    FrontDoorLimits limits() {
        return new FrontDoorLimits(idleTimeoutSeconds, requestReadTimeoutMillis, maxConnections, maxPendingBodyBytes);
    }

    /** Who counts what the front door reports; looked up when first needed (the bean of that name, or nobody). */
    protected FrontDoorEvents events(CamelContext context) {
        FrontDoorEvents e = context.getRegistry().lookupByNameAndType(eventsBean, FrontDoorEvents.class);
        return e != null ? e : FrontDoorEvents.NONE;
    }

    @Override
    public void setCamelContext(CamelContext camelContext) {
        this.camelContext = camelContext;
        camelFactory.setCamelContext(camelContext);
    }

    @Override
    public CamelContext getCamelContext() {
        return camelContext;
    }

    public void setIdleTimeoutSeconds(int seconds) { this.idleTimeoutSeconds = seconds; }
    public void setRequestReadTimeoutMillis(long millis) { this.requestReadTimeoutMillis = millis; }
    public void setMaxConnections(int maxConnections) { this.maxConnections = maxConnections; }
    public void setMaxPendingBodyBytes(long bytes) { this.maxPendingBodyBytes = bytes; }
    /** the bean that counts what the front door reports ({@link FrontDoorEvents}), looked up when first needed */
    public void setEventsBean(String name) { this.eventsBean = name; }
}
