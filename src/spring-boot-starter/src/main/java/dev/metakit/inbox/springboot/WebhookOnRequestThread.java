package dev.metakit.inbox.springboot;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.camel.CamelContext;
import org.apache.camel.Processor;
import org.apache.camel.component.platform.http.PlatformHttpEndpoint;
import org.apache.camel.component.platform.http.spi.PlatformHttpConsumer;
import org.apache.camel.component.platform.http.spi.PlatformHttpEngine;
import org.apache.camel.component.platform.http.springboot.SpringBootPlatformHttpConsumer;
import org.apache.camel.spring.boot.CamelContextConfiguration;

import java.util.concurrent.CompletableFuture;

/**
 * The webhook's endpoint, and only it, runs its route on the servlet container's request thread and answers there.
 * Camel Spring Boot's platform-http consumer hands every request to an executor of the host's (Spring's task
 * executor, eight threads by default), holds that thread until the route ends, and answers through Spring MVC's
 * asynchronous dispatch, a second pass through the container. For the ingest route the end is the inbox commit: at
 * most eight deliveries could share a commit, and each paid two more thread hand-offs and the second pass. Here the
 * request thread that read the delivery runs the route, waits for its commit and writes the answer, as a plain
 * servlet would. It is Camel's own consumer (its binding, its answers), set on the webhook's endpoint alone: the
 * host's platform-http routes and its executors stay as the host has them.
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
        PlatformHttpEngine onRequestThread = new PlatformHttpEngine() {
            @Override
            public PlatformHttpConsumer createConsumer(PlatformHttpEndpoint endpoint, Processor processor) {
                return new AnsweredOnRequestThread(endpoint, processor);
            }

            @Override
            public int getServerPort() {
                return serverPort;
            }
        };
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

    /**
     * Camel's consumer, serving on the calling thread. Spring MVC calls {@link #service} (the handler method Camel
     * Spring Boot maps); the answer is written before it returns, and no future means no asynchronous dispatch.
     * A failure outside the route goes back as a failed future, which Spring MVC answers as it does Camel's own.
     */
    static final class AnsweredOnRequestThread extends SpringBootPlatformHttpConsumer {
        AnsweredOnRequestThread(PlatformHttpEndpoint endpoint, Processor processor) {
            super(endpoint, processor, Runnable::run);
        }

        @Override
        public CompletableFuture<Void> service(HttpServletRequest request, HttpServletResponse response) {
            try {
                handleService(request, response);
                return null;
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        }
    }
}
