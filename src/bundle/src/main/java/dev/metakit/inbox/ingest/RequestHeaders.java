package dev.metakit.inbox.ingest;

import org.apache.camel.Message;

import java.util.List;

/**
 * Reads a header from the HTTP request itself, where the HTTP engine serving the ingest route keeps it. platform-http
 * copies query parameters into the message headers under the same filter as the headers, so the message header alone
 * cannot tell {@code ?X-MetaKit-Signature=...} from the real header. A runtime may provide one for its engine
 * (META-INF/services): the standalone runtime does for Vert.x, the Spring Boot starter for the servlet request. On any
 * other engine {@link DeliveryHeaders} takes the query string's values back out of the message header's.
 */
public interface RequestHeaders {
    /**
     * @return every value of the request header (empty when it has none), or null when the message is not one of
     * this engine's requests
     */
    List<String> all(Message message, String name);
}
