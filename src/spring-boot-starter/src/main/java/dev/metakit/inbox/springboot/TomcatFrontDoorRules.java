package dev.metakit.inbox.springboot;

import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;

/**
 * The standalone front door's rules that Tomcat has an equivalent for: a request read within a deadline
 * (connection timeout), idle keep-alive connections closed (keep-alive timeout), a connection cap. The memory budget
 * for half-sent bodies has none (Tomcat reads a body on a thread of its own, bounded by its thread pool).
 */
class TomcatFrontDoorRules implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {
    private final MetakitProperties.Http http;

    TomcatFrontDoorRules(MetakitProperties.Http http) {
        this.http = http;
    }

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        factory.addConnectorCustomizers(connector -> {
            if (connector.getProtocolHandler() instanceof AbstractHttp11Protocol<?> protocol) {
                protocol.setConnectionTimeout((int) http.getRequestReadTimeoutMillis());
                protocol.setKeepAliveTimeout(http.getIdleTimeoutSeconds() * 1000);
                protocol.setMaxConnections(http.getMaxConnections());
            }
        });
    }
}
