package dev.metakit.inbox.conformance;

import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;

import java.util.Collection;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * The conformance checks against a host that runs in the test's JVM (a camel-main or a plain CamelContext host): the
 * runtime's parts ({@link RuntimeParts}: an embedded PostgreSQL, the sandbox as MetaKit), the bundle's settings as such
 * a host gives them, and Camel's readiness checks as the host's probe invokes them. A subclass starts and stops its host.
 */
public abstract class InProcessHostChecks extends ConformanceChecksOnParts {
    private HostLog log;

    /** Starts the host serving on {@code port} with the bundle's {@code settings}. */
    protected abstract void startHost(int port, Properties settings) throws Exception;

    @Override
    protected final void startHost(RuntimeParts parts) throws Exception {
        Properties settings = new Properties();
        settings.putAll(parts.settings());
        log = HostLog.fromNow();
        startHost(parts.port(), settings);
    }

    /** Camel's readiness checks, as the host's probe invokes them. */
    @Override
    public Readiness readiness() {
        Collection<HealthCheck.Result> results = HealthCheckHelper.invokeReadiness(camelContext(), "full");
        boolean up = results.stream().allMatch(r -> r.getState() == HealthCheck.State.UP);
        return new Readiness(up, results.stream().map(r -> r.getCheck().getId() + " " + r.getState()
                + r.getMessage().map(m -> " " + m).orElse("")).collect(Collectors.joining("\n")));
    }

    @Override
    public boolean stopAsOnSigterm() throws Exception {
        stopHost();
        return true;
    }

    /** What the host logged since it started. */
    @Override
    public String log() throws Exception {
        return log.text();
    }
}
