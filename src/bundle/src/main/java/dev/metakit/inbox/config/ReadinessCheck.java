package dev.metakit.inbox.config;

import org.apache.camel.impl.health.AbstractHealthCheck;

/**
 * A health check of the bundle's (group {@code metakit}) that counts for readiness only: DOWN takes the instance out of
 * the load balancer, and never gets a healthy process restarted for what a restart cannot mend (a database outage, a
 * rejected key).
 */
public abstract class ReadinessCheck extends AbstractHealthCheck {
    protected ReadinessCheck(String id) {
        super("metakit", id);
    }

    @Override
    public final boolean isLiveness() {
        return false;
    }
}
