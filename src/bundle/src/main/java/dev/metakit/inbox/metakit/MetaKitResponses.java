package dev.metakit.inbox.metakit;

import dev.metakit.inbox.config.ContextAwareBean;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.config.SecretSettings;
import org.apache.camel.Exchange;
import org.apache.camel.Message;

import java.time.Duration;

/**
 * Called by {@code direct:metakit-get} after the HTTP call: a 2xx passes with its body as bytes, anything else
 * becomes a {@link MetaKitApiException}; a 401 also flips {@link MetaKitApiHealth} so it shows as one failed health
 * check instead of a stream of identical errors.
 */
public class MetaKitResponses extends ContextAwareBean {
    private final MetaKitJson json = new MetaKitJson();
    private MetaKitApiHealth apiHealth;
    private String apiKey;
    private Boolean devMode;

    /** The key is required once reconciles run, which is always: stop startup if it is missing. */
    public void start() {
        boolean dev = Required.setting(devMode, "metakit.dev-mode");
        apiKey = secret(SecretSettings.API_KEY, apiKey);
        if ((apiKey == null || apiKey.isBlank()) && !dev) {
            throw new dev.metakit.inbox.config.ConfigurationException(
                    "METAKIT_API_KEY is required: the worker reconciles every account against MetaKit's REST API");
        }
    }

    /** Adds the bearer key right before the call; {@link #check} removes it right after, so it never travels on. */
    public void authorize(Exchange exchange) {
        exchange.getMessage().setHeader("Authorization", "Bearer " + apiKey);
    }

    public void check(Exchange exchange) {
        Message in = exchange.getMessage();
        in.removeHeader("Authorization");
        Integer status = in.getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
        byte[] body = in.getBody(byte[].class);
        in.setBody(body);
        String call = in.getHeader(Exchange.HTTP_PATH, String.class);
        if (status != null && status >= 200 && status < 300) {
            if (apiHealth != null) {
                apiHealth.succeeded();
            }
            return;
        }
        int code = status == null ? -1 : status;
        String error = body == null ? "" : json.errorMessage(body).map(m -> ": " + m).orElse("");
        MetaKitApiException failure = new MetaKitApiException(code, retryAfter(in.getHeader("Retry-After", String.class)),
                "MetaKit GET " + call + " answered " + code + error);
        if (failure.unauthorized() && apiHealth != null) {
            apiHealth.rejected(failure.getMessage());
        }
        throw failure;
    }

    static Duration retryAfter(String header) {
        if (header == null || header.isBlank()) {
            return null;
        }
        try {
            long seconds = Long.parseLong(header.trim());
            return seconds < 0 ? null : Duration.ofSeconds(Math.min(seconds, 3600));
        } catch (NumberFormatException notSeconds) {
            return null;
        }
    }

    public void setApiKey(String apiKey) {
        this.apiKey = apiKey;
    }

    public void setDevMode(boolean devMode) {
        this.devMode = devMode;
    }

    public void setApiHealth(MetaKitApiHealth apiHealth) {
        this.apiHealth = apiHealth;
    }
}
