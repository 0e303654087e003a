package dev.metakit.inbox.ingest;

import org.apache.camel.Exchange;
import org.apache.camel.spi.HeaderFilterStrategy;

import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The ingest endpoint's header filter: only the request headers the route reads become message headers, and only
 * the listed response headers are written back. Everything else a sender puts on a delivery stays out of the
 * exchange (and out of the answer), which also spares copying it per delivery on the ack path.
 */
public class IngestHeaderFilter implements HeaderFilterStrategy {
    private Set<String> requestHeaders = names("X-MetaKit-Signature,X-MetaKit-Event,Content-Type");
    private Set<String> responseHeaders = names("Content-Type,Retry-After");

    /** true = the request header is dropped */
    @Override
    public boolean applyFilterToExternalHeaders(String headerName, Object headerValue, Exchange exchange) {
        return !requestHeaders.contains(headerName.toLowerCase(Locale.ROOT));
    }

    /** true = the message header is not written to the response */
    @Override
    public boolean applyFilterToCamelHeaders(String headerName, Object headerValue, Exchange exchange) {
        return !responseHeaders.contains(headerName.toLowerCase(Locale.ROOT));
    }

    /** comma-separated, case-insensitive: the request headers the ingest route may read */
    public void setRequestHeaders(String list) {
        this.requestHeaders = names(list);
    }

    /** comma-separated, case-insensitive: the headers an answer may carry */
    public void setResponseHeaders(String list) {
        this.responseHeaders = names(list);
    }

    private static Set<String> names(String list) {
        return Arrays.stream(list.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .map(s -> s.toLowerCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
    }
}
