package dev.metakit.inbox.db;

import dev.metakit.inbox.config.ReadinessCheck;
import dev.metakit.inbox.config.RootCause;
import org.apache.camel.health.HealthCheckResultBuilder;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.time.Duration;
import java.util.Map;

/**
 * Readiness: the inbox database answers, and the inbox and the feed have a partition for today and tomorrow. Not a
 * liveness check: a database outage must take the instance out of
 * the load balancer, not get a healthy process restarted.
 * <p>
 * Bounded: a database that does not answer (packets dropped, the socket open) makes the check report down, "timed
 * out after 800 ms", within that time, so {@code /observe/health} answers within a second whatever the database
 * does ({@link DeadlineProbe}). The check borrows from the bundle's pool, as a delivery does: what it reports is
 * what the next delivery meets.
 */
public class InboxDatabaseHealthCheck extends ReadinessCheck {
    /** leaves the rest of a 1 s health answer to the other checks and the HTTP round trip */
    static final Duration DEADLINE = Duration.ofMillis(800);
    /** isValid's own bound, in seconds (its unit); the deadline cuts it shorter */
    private static final int VALID_SECONDS = 1;

    private DataSource dataSource;
    private Clock clock = Clock.systemUTC();
    private final DeadlineProbe probe = new DeadlineProbe("inbox-database", DEADLINE, this::check);

    public InboxDatabaseHealthCheck() {
        super("inbox-database");
    }

    @Override
    protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
        DeadlineProbe.Outcome outcome = probe();
        if (outcome.up()) {
            builder.up();
        } else {
            builder.message(outcome.reason()).down();
        }
    }

    /**
     * The check's answer within its deadline: what a host's own health endpoint (a Spring Boot HealthIndicator) calls
     * when it does not go through Camel's health registry.
     */
    public DeadlineProbe.Outcome probe() {
        return probe.probe();
    }

    private String check() {
        try (Connection c = dataSource.getConnection()) {
            return c.isValid(VALID_SECONDS) ? missingPartition(c) : "database connection is not valid";
        } catch (Exception e) {
            return "database unavailable: " + RootCause.message(e);
        }
    }

    /**
     * A day of today and tomorrow (UTC) that the inbox or the feed has no partition for: a row of that time would
     * not be stored (no default partition takes it). The retention route makes the days ahead.
     */
    private String missingPartition(Connection c) throws SQLException {
        LocalDate today = DayPartitions.day(clock.instant());
        for (DayPartitions days : List.of(DayPartitions.INBOX, DayPartitions.FEED)) {
            Optional<LocalDate> missing = days.firstUncovered(c, today, today.plusDays(1));
            if (missing.isPresent()) {
                return days.table() + " has no partition for " + missing.get() + " (" + days.name(missing.get())
                        + "): its rows of that day cannot be stored; the retention route makes the days ahead, its "
                        + "log says why it did not";
            }
        }
        return null;
    }

    /** The clock the days are counted on; a test sets its own. */
    public void setClock(Clock clock) {
        this.clock = clock;
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }
}
