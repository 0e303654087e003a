package dev.metakit.inbox.ingest;

import dev.metakit.inbox.signature.SignatureVerificationException;
import dev.metakit.inbox.signature.SignatureVerificationException.Reason;
import io.vertx.core.MultiMap;
import org.apache.camel.Message;
import org.apache.camel.component.platform.http.vertx.HttpMessage;

import java.util.Collection;
import java.util.List;

/**
 * Reads one of the delivery's own request headers ({@code X-MetaKit-Signature}, {@code X-MetaKit-Event}) where only
 * a real request header can supply it. platform-http copies query parameters into the message headers under the same
 * filter as the headers, so {@code ?X-MetaKit-Signature=...} would otherwise read as the signature: on the Vert.x
 * engine (camel-main, {@code camel run}) the value is taken from the request's headers themselves. On another engine
 * (a host platform) the message header is all there is. Either way a header given twice is refused: which copy
 * counts would be up to whoever reads it.
 */
final class DeliveryHeaders {
    private DeliveryHeaders() {
    }

    /** @return the header's value, or null when the request has none */
    static String single(Message message, String name) throws SignatureVerificationException {
        if (message instanceof HttpMessage http && http.getRequest() != null) {
            return single(http.getRequest().headers(), name);
        }
        Object value = message.getHeader(name);
        if (value instanceof Collection<?> several) {
            if (several.size() > 1) {
                throw new SignatureVerificationException(Reason.REPEATED_HEADER);
            }
            value = several.isEmpty() ? null : several.iterator().next();
        }
        return value == null ? null : value.toString();
    }

    private static String single(MultiMap headers, String name) throws SignatureVerificationException {
        List<String> all = headers.getAll(name);
        if (all.size() > 1) {
            throw new SignatureVerificationException(Reason.REPEATED_HEADER);
        }
        return all.isEmpty() ? null : all.get(0);
    }
}
