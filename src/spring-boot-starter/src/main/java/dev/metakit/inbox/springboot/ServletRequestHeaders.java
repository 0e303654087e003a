package dev.metakit.inbox.springboot;

import dev.metakit.inbox.ingest.RequestHeaders;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.camel.Message;
import org.apache.camel.component.platform.http.springboot.PlatformHttpMessage;

import java.util.Collections;
import java.util.List;

/**
 * The request headers of a request served by Camel Spring Boot's platform-http engine: the signature and the event
 * are read from the request's headers only, never from a query parameter of the same name.
 */
public final class ServletRequestHeaders implements RequestHeaders {
    @Override
    public List<String> all(Message message, String name) {
        if (message instanceof PlatformHttpMessage http && http.getRequest() != null) {
            HttpServletRequest request = http.getRequest();
            return Collections.list(request.getHeaders(name));
        }
        return null;
    }
}
