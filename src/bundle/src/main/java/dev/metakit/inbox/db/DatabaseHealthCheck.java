package dev.metakit.inbox.db;

import org.apache.camel.health.HealthCheckResultBuilder;
import org.apache.camel.impl.health.AbstractHealthCheck;

import javax.sql.DataSource;
import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Readiness: the inbox database answers. Not a liveness check: a database outage must take the instance out of
 * the load balancer, not get a healthy process restarted.
 *
 * <p>The check bounds its own wait ({@link #setTimeoutMillis}, 3 s): a pool whose connection timeout is long (a host's
 * HikariCP waits 30 s by default) would otherwise keep readiness UP that long after the database went away. The probe
 * runs on a thread of its own; a check made while one is still waiting waits only for what is left of that one's
 * deadline, so several checks in one health request (Boot's readiness and camelHealth) stay within one timeout.
 */
public class DatabaseHealthCheck extends AbstractHealthCheck {
    private DataSource dataSource;
    private long timeoutMillis = 3000;
    private CompletableFuture<Boolean> pending;
    private long pendingSince;

    public DatabaseHealthCheck() {
        super("metakit", "inbox-database");
    }

    @Override
    public boolean isLiveness() {
        return false;
    }

    @Override
    protected void doCall(HealthCheckResultBuilder builder, Map<String, Object> options) {
        CompletableFuture<Boolean> probe;
        long waitMillis;
        synchronized (this) {
            probe = probe();
            waitMillis = Math.max(0, timeoutMillis - (System.currentTimeMillis() - pendingSince));
        }
        try {
            if (probe.get(waitMillis, TimeUnit.MILLISECONDS)) {
                builder.up();
            } else {
                builder.message("database connection is not valid").down();
            }
        } catch (TimeoutException e) {
            builder.message("database unavailable: no connection within " + timeoutMillis + " ms").down();
        } catch (ExecutionException e) {
            builder.message("database unavailable: " + e.getCause().getMessage()).down();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            builder.message("database check interrupted").down();
        }
    }

    private CompletableFuture<Boolean> probe() {
        CompletableFuture<Boolean> running = pending;
        if (running != null && !running.isDone()) {
            return running;
        }
        CompletableFuture<Boolean> probe = new CompletableFuture<>();
        Thread thread = new Thread(() -> {
            try (Connection c = dataSource.getConnection()) {
                probe.complete(c.isValid((int) Math.max(1, timeoutMillis / 1000)));
            } catch (Throwable t) {
                probe.completeExceptionally(t);
            }
        }, "metakit-database-check");
        thread.setDaemon(true);
        pending = probe;
        pendingSince = System.currentTimeMillis();
        thread.start();
        return probe;
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** How long the check waits for a connection before it reports the database DOWN. */
    public void setTimeoutMillis(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }
}
