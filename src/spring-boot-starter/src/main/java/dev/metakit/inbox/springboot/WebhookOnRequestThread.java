package dev.metakit.inbox.springboot;

import org.apache.camel.CamelContext;
import org.apache.camel.component.platform.http.PlatformHttpEndpoint;
import org.apache.camel.component.platform.http.springboot.SpringBootPlatformHttpEngine;
import org.apache.camel.spring.boot.CamelContextConfiguration;

/**
 * The webhook's endpoint, and only it, runs its route on the servlet container's request thread. Camel Spring Boot's
 * platform-http consumer hands every request to an executor of the host's (Spring's task executor, eight threads by
 * default) and holds that thread until the route ends; for the ingest route that is the inbox commit, so eight
 * deliveries at a time could share a commit, and each paid two more thread hand-offs. Here the request thread that
 * read the delivery runs the route and waits for its commit itself (the ingest route holds no thread of its own
 * meanwhile). It is Camel's own Spring Boot engine and consumer, with an executor that runs the work where it is
 * handed over; set on the webhook's endpoint alone, so the host's own platform-http routes and its executors are
 * as the host has them.
 */
public class WebhookOnRequestThread implements CamelContextConfiguration {
    private final String webhookPath;
    private final int serverPort;

    public WebhookOnRequestThread(String webhookPath, int serverPort) {
        this.webhookPath = webhookPath;
        this.serverPort = serverPort;
    }

    @Override
    public void beforeApplicationStart(CamelContext context) {
        SpringBootPlatformHttpEngine onRequestThread = new SpringBootPlatformHttpEngine(serverPort, Runnable::run);
        context.getCamelContextExtension().registerEndpointCallback((uri, endpoint) -> {
            if (endpoint instanceof PlatformHttpEndpoint http && webhookPath.equals(http.getPath())
                    && http.getPlatformHttpEngine() == null) {
                http.setPlatformHttpEngine(onRequestThread);
            }
            return endpoint;
        });
    }

    @Override
    public void afterApplicationStart(CamelContext context) {
    }
}
