package dev.metakit.inbox.db;

import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.camel.impl.health.AbstractHealthCheck;

import javax.sql.DataSource;
import java.sql.Connection;
import java.util.Map;

/**
 * Readiness: the inbox database answers. Not a liveness check: a database outage must take the instance out of
 * the load balancer, not get a healthy process restarted.
 */
public class DatabaseHealthCheck extends AbstractHealthCheck {
    private DataSource dataSource;

    public DatabaseHealthCheck() {
        super("metakit", "inbox-database");
    }

    @Override
    public boolean isLiveness() {
        return false;
    }

    @Override
    protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
        try (Connection c = dataSource.getConnection()) {
            if (c.isValid(1)) {
                builder.up();
            } else {
                builder.message("database connection is not valid").down();
            }
        } catch (Exception e) {
            builder.message("database unavailable: " + e.getMessage()).down();
        }
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }
}
