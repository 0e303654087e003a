package dev.metakit.inbox;

import dev.metakit.inbox.ingest.RequestHeaders;
import org.apache.camel.Message;
import org.apache.camel.component.platform.http.vertx.HttpMessage;

import java.util.List;

/** The request headers of a request served by Camel's Vert.x platform-http engine (the standalone run's front door). */
public final class VertxRequestHeaders implements RequestHeaders {
    @Override
    public List<String> all(Message message, String name) {
        if (message instanceof HttpMessage http && http.getRequest() != null) {
            return http.getRequest().headers().getAll(name);
        }
        return null;
    }
}
