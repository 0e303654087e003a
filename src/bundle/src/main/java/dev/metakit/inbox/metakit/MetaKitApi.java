package dev.metakit.inbox.metakit;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * The REST paths of MetaKit, relative to the configured base URL (no leading host, always a leading slash), and the
 * endpoint that GETs them. Stateless and thread-safe.
 */
public class MetaKitApi {
    /**
     * The route of routes/metakit-api.camel.yaml that makes one MetaKit GET: the path (with its query) in as the body,
     * the answer's bytes out as the body, a non-2xx answer a {@link MetaKitApiException}. The route file owns the call
     * and integrators edit it, so its endpoint is named by a setting that the file's {@code from} and the Java that
     * calls it both read: the name exists once, in application.properties, and a route replacing it
     * ({@code metakit.routes.replaced}) can be named there too.
     */
    public static final String GET_ENDPOINT = "{{metakit.api.get-endpoint}}";

    private static final DateTimeFormatter ISO_SECONDS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'")
            .withZone(java.time.ZoneOffset.UTC);

    public String positionsPath(long accountId) {
        return "/v1/accounts/" + accountId + "/positions";
    }

    /**
     * {@code /v1/accounts/{id}/deals?from=..&to=..}; a null bound is left out. The API takes whole seconds and both
     * bounds are inclusive, so {@code from} is rounded down and {@code to} up: the window never shrinks.
     */
    public String dealsPath(long accountId, Instant from, Instant to) {
        List<String> query = new ArrayList<>(2);
        if (from != null) {
            query.add("from=" + encode(ISO_SECONDS.format(from.truncatedTo(ChronoUnit.SECONDS))));
        }
        if (to != null) {
            Instant up = to.truncatedTo(ChronoUnit.SECONDS);
            if (up.isBefore(to)) {
                up = up.plusSeconds(1);
            }
            query.add("to=" + encode(ISO_SECONDS.format(up)));
        }
        String path = "/v1/accounts/" + accountId + "/deals";
        return query.isEmpty() ? path : path + "?" + String.join("&", query);
    }

    public String webhooksPath() {
        return "/v1/webhooks";
    }

    public String rotatePath(String webhookId) {
        return "/v1/webhooks/" + URLEncoder.encode(webhookId, StandardCharsets.UTF_8).replace("+", "%20") + "/rotate";
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
