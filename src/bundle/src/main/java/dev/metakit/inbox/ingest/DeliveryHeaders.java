package dev.metakit.inbox.ingest;

import dev.metakit.inbox.signature.SignatureVerificationException;
import dev.metakit.inbox.signature.SignatureVerificationException.Reason;
import org.apache.camel.Message;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Reads one of the delivery's own request headers ({@code X-MetaKit-Signature}, {@code X-MetaKit-Event}) where only
 * a real request header can supply it. platform-http copies query parameters into the message headers under the same
 * filter as the headers, so {@code ?X-MetaKit-Signature=...} would otherwise read as the signature. Where the runtime
 * provides a {@link RequestHeaders} for its HTTP engine (the standalone runtime's Vert.x, the Spring Boot starter's
 * servlet request) the value is taken from the request's headers themselves; on any other engine (Quarkus's Vert.x, a
 * plain CamelContext's) the values the query string gave the name ({@link QueryParameters}) are taken out of the
 * message header's, so a query parameter counts neither for nor against a delivery. Either way a header given twice
 * is refused: which copy counts would be up to whoever reads it.
 */
final class DeliveryHeaders {
    private static final List<RequestHeaders> ENGINES = ServiceLoader.load(RequestHeaders.class,
            DeliveryHeaders.class.getClassLoader()).stream().map(ServiceLoader.Provider::get).toList();

    private DeliveryHeaders() {
    }

    /** @return the header's value, or null when the request has none */
    static String single(Message message, String name) throws SignatureVerificationException {
        List<String> all = requestHeader(message, name);
        if (all.size() > 1) {
            throw new SignatureVerificationException(Reason.REPEATED_HEADER);
        }
        return all.isEmpty() ? null : all.get(0);
    }

    private static List<String> requestHeader(Message message, String name) {
        for (RequestHeaders engine : ENGINES) {
            List<String> all = engine.all(message, name);
            if (all != null) {
                return all;
            }
        }
        List<String> values = new ArrayList<>();
        Object value = message.getHeader(name);
        if (value instanceof Collection<?> several) {
            several.forEach(v -> values.add(String.valueOf(v)));
        } else if (value != null) {
            values.add(value.toString());
        }
        // each value the query string gave is one the message header holds besides the request's own
        for (String fromQuery : QueryParameters.values(message, name)) {
            values.remove(fromQuery);
        }
        return values;
    }
}
