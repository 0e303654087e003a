package dev.metakit.inbox.ingest;

import org.apache.camel.support.DefaultHeaderFilterStrategy;

/**
 * The ingest endpoint's header filter: Camel's strategy as an allow-list. Only the request headers the route reads
 * become message headers, and only the listed headers are written to the answer; everything else a sender puts on
 * a delivery stays out of the exchange (and out of the answer), which also spares copying it on the ack path.
 * The setters take comma-separated names (YAML bean properties cannot bind the strategy's own {@code Set} setters).
 *
 * <p>platform-http passes query parameters through the same filter as headers, so a listed name in the query string
 * gets in too: the signature and event are therefore read from the request's own headers ({@link DeliveryHeaders}),
 * never from what this filter let through.
 */
public class IngestHeaderFilter extends DefaultHeaderFilterStrategy {

    public IngestHeaderFilter() {
        setFilterOnMatch(false);
        setCaseInsensitive(true);
        setRequestHeaders("X-MetaKit-Signature,X-MetaKit-Event,Content-Type");
        setResponseHeaders("Content-Type,Retry-After");
    }

    /** comma-separated, case-insensitive: the request headers the ingest route may read */
    public void setRequestHeaders(String list) {
        setInFilter(list);
    }

    /** comma-separated, case-insensitive: the headers an answer may carry */
    public void setResponseHeaders(String list) {
        setOutFilter(list);
    }
}
