package dev.metakit.inbox.metakit;

import dev.metakit.inbox.config.ReadinessCheck;
import org.apache.camel.health.HealthCheckResultBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

/**
 * Readiness of the MetaKit API key: down, with one ERROR line, from the first 401 until a call succeeds again.
 * Transient API trouble (5xx, 429, timeouts) does not count: the inbox absorbs it.
 */
public class MetaKitApiHealth extends ReadinessCheck {
    private static final Logger LOG = LoggerFactory.getLogger(MetaKitApiHealth.class);
    private volatile String rejection;

    public MetaKitApiHealth() {
        super("metakit-api-key");
    }

    void rejected(String message) {
        if (rejection == null) {
            LOG.error("MetaKit rejected the API key ({}); check METAKIT_API_KEY. Reconciles wait and retry with backoff.",
                    message);
        }
        rejection = message;
    }

    void succeeded() {
        if (rejection != null) {
            LOG.info("MetaKit accepts the API key again");
            rejection = null;
        }
    }

    @Override
    protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
        String r = rejection;
        if (r == null) {
            builder.up();
        } else {
            builder.message("MetaKit API key rejected: " + r).down();
        }
    }
}
