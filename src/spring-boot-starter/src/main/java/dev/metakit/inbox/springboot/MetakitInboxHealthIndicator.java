package dev.metakit.inbox.springboot;

import dev.metakit.inbox.db.InboxDatabaseHealthCheck;
import dev.metakit.inbox.db.DeadlineProbe;
import org.apache.camel.CamelContext;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/**
 * The bundle's own indicator in the host's health ({@code metakitInbox}): its database check, bounded (down, "timed
 * out", within 800 ms whatever the database does), on the bundle's own pool. It sits beside the host's indicators
 * ({@code db} among them), which the starter leaves as Boot has them, and in the overall status of
 * {@code /actuator/health}. Which indicators a readiness probe reads is the host's setting: Camel's health
 * ({@code camelHealth}) holds the same check and the bundle's other readiness checks (docs/spring-boot.md "Health").
 */
public class MetakitInboxHealthIndicator implements HealthIndicator {
    /** the bean of routes/beans.camel.yaml */
    static final String DATABASE_CHECK_BEAN = "inboxDatabaseHealthCheck";

    private final CamelContext camelContext;

    public MetakitInboxHealthIndicator(CamelContext camelContext) {
        this.camelContext = camelContext;
    }

    @Override
    public Health health() {
        InboxDatabaseHealthCheck check = camelContext.getRegistry()
                .lookupByNameAndType(DATABASE_CHECK_BEAN, InboxDatabaseHealthCheck.class);
        if (check == null) {
            return Health.down().withDetail("database", "the bean " + DATABASE_CHECK_BEAN
                    + " is missing (metakit.route-files must load routes/beans.camel.yaml)").build();
        }
        DeadlineProbe.Outcome outcome = check.probe();
        return outcome.up() ? Health.up().withDetail("database", "UP").build()
                : Health.down().withDetail("database", outcome.reason()).build();
    }
}
