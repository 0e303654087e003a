package dev.metakit.inbox.springboot;

import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.apache.camel.CamelContext;
import org.apache.camel.spring.boot.CamelAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * metakit-inbox in a Spring Boot host, from one dependency: the bundle's Java DSL routes (the worker, the reconcile)
 * as a RouteBuilder bean, its route files (the YAML routes and their beans) loaded into the host's CamelContext, its
 * health indicator ({@code metakitInbox}; its checks are in Camel's, {@code camelHealth}), its meters on Boot's registry, and the front-door rules Boot's server has
 * an equivalent for. Every bean here gives way to a host's bean of the same type.
 */
@AutoConfiguration(after = CamelAutoConfiguration.class)
@EnableConfigurationProperties(MetakitProperties.class)
public class MetakitInboxAutoConfiguration {

    /**
     * A delivery's way to its position: the worker's doorbell and drain (claim → reconcile → complete/fail), one
     * account's reconcile, and the full reconcile's fan-out.
     */
    @Bean
    @ConditionalOnMissingBean(InboxToPositionRoutes.class)
    public InboxToPositionRoutes metakitInboxToPositionRoutes() {
        return new InboxToPositionRoutes();
    }

    /** Loads the route files (metakit.route-files) and registers the bundle's route meters before Camel starts. */
    @Bean
    @ConditionalOnMissingBean(MetakitRouteFiles.class)
    public MetakitRouteFiles metakitRouteFiles(MetakitProperties properties) {
        return new MetakitRouteFiles(properties.getRouteFiles());
    }

    /**
     * The bundle's own indicator in the host's health, {@code metakitInbox}: its bounded database check. The host's
     * own indicators ({@code db}, ...) stay as Boot has them.
     */
    @Bean
    @ConditionalOnMissingBean(name = "metakitInboxHealthIndicator")
    public MetakitInboxHealthIndicator metakitInboxHealthIndicator(CamelContext camelContext) {
        return new MetakitInboxHealthIndicator(camelContext);
    }

    /**
     * The webhook's route on the request thread that read the delivery, not on a thread of the host's task executor
     * ({@link WebhookOnRequestThread}); the host's own platform-http routes keep Camel Spring Boot's executor.
     */
    @Bean
    @ConditionalOnMissingBean(name = "metakitWebhookOnRequestThread")
    public WebhookOnRequestThread metakitWebhookOnRequestThread(MetakitProperties p,
            @org.springframework.beans.factory.annotation.Value("${server.port:8080}") int serverPort) {
        return new WebhookOnRequestThread(p.getWebhook().getPath(), serverPort);
    }

    /** The front door's rules on the embedded Tomcat: read and idle timeouts, a connection cap, the body limit. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    static class FrontDoorRules {
        @Bean
        @ConditionalOnClass(name = "org.apache.catalina.startup.Tomcat")
        @ConditionalOnMissingBean(name = "metakitTomcatRules")
        public WebServerFactoryCustomizer<TomcatServletWebServerFactory> metakitTomcatRules(MetakitProperties p) {
            return new TomcatFrontDoorRules(p.getHttp());
        }

        @Bean
        @ConditionalOnMissingBean(name = "metakitBodyLimit")
        public FilterRegistrationBean<WebhookBodyLimit> metakitBodyLimit(MetakitProperties p) {
            FilterRegistrationBean<WebhookBodyLimit> registration =
                    new FilterRegistrationBean<>(new WebhookBodyLimit(p.getMaxBodyBytes()));
            registration.addUrlPatterns(p.getWebhook().getPath());
            return registration;
        }
    }

}
