package dev.metakit.inbox.ops;

import dev.metakit.inbox.metakit.MetaKitApi;
import dev.metakit.inbox.metakit.MetaKitApiException;
import dev.metakit.inbox.reconcile.AccountReconcile;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.apache.camel.Exchange;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.spi.CamelEvent.ExchangeCompletedEvent;
import org.apache.camel.spi.CamelEvent.ExchangeFailedEvent;
import org.apache.camel.spi.CamelEvent.ExchangeSendingEvent;
import org.apache.camel.spi.CamelEvent.ExchangeSentEvent;
import org.apache.camel.support.EventNotifierSupport;
import org.apache.camel.util.URISupport;

/**
 * Turns exchange events into the bundle's meters, so the routes stay as they are: a send to
 * {@link InboxToPositionRoutes#RECONCILE_ACCOUNT} is one reconcile (its trigger taken from the
 * {@link AccountReconcile} it is sent), an HTTP send inside a send to {@link MetaKitApi#GET_ENDPOINT} is one MetaKit
 * call (its kind taken from the path that send carried), and a finished exchange that came in on the webhook's path
 * (whatever the ingest route is called) is one answer: accepted (stored or duplicate), rejected or unavailable.
 * Counting here rather than with {@code micrometer:} steps keeps three endpoint sends per delivery off the ack path.
 */
class MetricsEventNotifier extends EventNotifierSupport {
    private static final String RECONCILE_URI = normalized(InboxToPositionRoutes.RECONCILE_ACCOUNT);
    static final String TRIGGER_PROPERTY = "metakitReconcileTrigger";
    /** the path of the MetaKit GET an exchange is in, for the HTTP send it makes */
    private static final String CALL_PATH_PROPERTY = "metakitApiCallPath";

    private final InboxMetrics metrics;
    private final String getUri;

    /** @param getEndpoint the endpoint of MetaKit GETs, {@link MetaKitApi#GET_ENDPOINT} resolved */
    MetricsEventNotifier(InboxMetrics metrics, String getEndpoint) {
        this.metrics = metrics;
        this.getUri = normalized(getEndpoint);
        setIgnoreCamelContextEvents(true);
        setIgnoreRouteEvents(true);
        setIgnoreServiceEvents(true);
        setIgnoreStepEvents(true);
        setIgnoreExchangeCreatedEvent(true);
        setIgnoreExchangeRedeliveryEvents(true);
        setIgnoreExchangeAsyncProcessingStartedEvents(true);
    }

    @Override
    public void notify(CamelEvent event) {
        if (event instanceof ExchangeSendingEvent sending) {
            Exchange e = sending.getExchange();
            String uri = sending.getEndpoint().getEndpointUri();
            if (RECONCILE_URI.equals(uri)) {
                // once sent, the body is the reconcile's result: keep its trigger beside it
                e.setProperty(TRIGGER_PROPERTY, e.getMessage().getBody() instanceof AccountReconcile r
                        ? r.trigger() : AccountReconcile.EVENT);
            } else if (getUri.equals(uri)) {
                // the path is the body only until the GET route sends it: keep it for that HTTP send
                e.setProperty(CALL_PATH_PROPERTY, e.getMessage().getBody(String.class));
            }
        } else if (event instanceof ExchangeSentEvent sent) {
            sent(sent);
        } else if (event instanceof ExchangeCompletedEvent || event instanceof ExchangeFailedEvent) {
            Exchange e = ((CamelEvent.ExchangeEvent) event).getExchange();
            if (metrics.isWebhook(e.getFromEndpoint())) {
                metrics.answered(e);
            }
        }
    }

    private void sent(ExchangeSentEvent sent) {
        Exchange e = sent.getExchange();
        String uri = sent.getEndpoint().getEndpointUri();
        if (RECONCILE_URI.equals(uri)) {
            String trigger = e.getProperty(TRIGGER_PROPERTY, AccountReconcile.EVENT, String.class);
            metrics.reconciled(trigger, e.getException() == null, sent.getTimeTaken());
        } else if (uri.startsWith("http") && e.getProperty(CALL_PATH_PROPERTY) != null) {
            metrics.apiCalled(endpointKind(e.getProperty(CALL_PATH_PROPERTY, String.class)), status(e));
        }
    }

    private static String normalized(String uri) {
        try {
            return URISupport.normalizeUri(uri);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException(uri, e);
        }
    }

    static String endpointKind(String path) {
        String p = path.replaceAll("\\?.*", "");
        if (p.endsWith("/positions")) {
            return "positions";
        }
        if (p.endsWith("/deals")) {
            return "deals";
        }
        if (p.endsWith("/webhooks")) {
            return "webhooks";
        }
        return "other";
    }

    private static String status(Exchange e) {
        if (e.getException() instanceof MetaKitApiException api) {
            return String.valueOf(api.status());
        }
        Integer code = e.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
        if (code != null) {
            return code.toString();
        }
        return e.getException() != null ? "error" : "unknown";
    }
}
