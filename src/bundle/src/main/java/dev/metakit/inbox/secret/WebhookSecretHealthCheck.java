package dev.metakit.inbox.secret;

import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.camel.impl.health.AbstractHealthCheck;

import java.util.Map;

/**
 * Readiness: DOWN while the stored webhook secret cannot be read with METAKIT_WEBHOOK_SECRET_KEY (the message names
 * the setting). A rotated secret not stored yet, or a rotation whose instance stopped mid-way, is UP with the problem
 * as its message: taking this instance out of the load balancer would leave the new secret with nobody who accepts
 * it, and the other instances accept every delivery MetaKit signs with the old secret too, during its window.
 */
public class WebhookSecretHealthCheck extends AbstractHealthCheck {
    private WebhookSecrets webhookSecrets;

    public WebhookSecretHealthCheck() {
        super("metakit", "webhook-secret");
    }

    @Override
    public boolean isLiveness() {
        return false;
    }

    @Override
    protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
        String problem = webhookSecrets.problem();
        if (problem != null) {
            builder.message(problem);
        }
        if (webhookSecrets.unreadable()) {
            builder.down();
        } else {
            builder.up();
        }
    }

    public void setWebhookSecrets(WebhookSecrets webhookSecrets) {
        this.webhookSecrets = webhookSecrets;
    }
}
