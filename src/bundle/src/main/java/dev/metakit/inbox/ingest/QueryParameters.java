package dev.metakit.inbox.ingest;

import org.apache.camel.Exchange;
import org.apache.camel.Message;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The values a request's query string gives a name, as platform-http copies them into the message headers (after the
 * request's own headers, under the same header filter, the name matched without regard to case). The query is read
 * from {@code CamelHttpRawQuery} (or {@code CamelHttpQuery}), which the engines set whatever the header filter lets
 * through.
 */
final class QueryParameters {
    private QueryParameters() {
    }

    /** @return the decoded values the query string gives {@code name}; empty when it gives none or there is no query */
    static List<String> values(Message message, String name) {
        String query = message.getHeader(Exchange.HTTP_RAW_QUERY, String.class);
        if (query == null) {
            query = message.getHeader(Exchange.HTTP_QUERY, String.class);
        }
        List<String> values = new ArrayList<>(0);
        if (query == null || query.isEmpty()) {
            return values;
        }
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            String key = decode(eq < 0 ? pair : pair.substring(0, eq));
            if (key.equalsIgnoreCase(name)) {
                values.add(eq < 0 ? "" : decode(pair.substring(eq + 1)));
            }
        }
        return values;
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException malformed) {
            // a malformed escape: the engine kept it as sent, or dropped it; either way it is no delivery header
            return s;
        }
    }
}
