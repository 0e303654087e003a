package dev.metakit.inbox.secret;

import dev.metakit.inbox.config.ReadinessCheck;
import org.apache.camel.health.HealthCheckResultBuilder;

import java.util.Map;

/**
 * Readiness: DOWN while the stored webhook secret cannot be read with METAKIT_WEBHOOK_SECRET_KEY, and while a secret
 * MetaKit rotated to is held in this instance's memory only (its store failed, retried every second: in practice
 * while the database is down, when readiness is DOWN anyway); the message names the setting or the failure. A rotation
 * whose instance stopped before storing is reported on the ops page and in an ERROR line, not here: it would take
 * every instance out of the load balancer, and each still accepts what MetaKit signs with the old secret during its
 * window.
 */
public class WebhookSecretHealthCheck extends ReadinessCheck {
    private WebhookSecrets webhookSecrets;

    public WebhookSecretHealthCheck() {
        super("webhook-secret");
    }

    @Override
    protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
        String problem = webhookSecrets.problem();
        if (problem != null) {
            builder.message(problem);
        }
        if (webhookSecrets.unreadable() || webhookSecrets.unsavedCount() > 0) {
            builder.down();
        } else {
            builder.up();
        }
    }

    public void setWebhookSecrets(WebhookSecrets webhookSecrets) {
        this.webhookSecrets = webhookSecrets;
    }
}
