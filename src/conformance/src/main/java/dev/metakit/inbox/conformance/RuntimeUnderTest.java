package dev.metakit.inbox.conformance;

import javax.sql.DataSource;
import java.net.URI;
import java.util.List;

/**
 * One runtime carrying the bundle, booted once for the whole {@link ConformanceChecks} class: its webhook as MetaKit
 * reaches it, its readiness as a probe reads it, the database it stores into (which the outage check stops and starts
 * again), its whole log, and the secrets it was given (none may appear in that log).
 */
public interface RuntimeUnderTest {
    /** {@code http://127.0.0.1:<port>/hooks/metakit} */
    URI webhook();

    /** the signing secret the runtime was given ({@code metakit.webhook.secret}) */
    String webhookSecret();

    /**
     * Every secret the runtime was given: the webhook secret, the previous one, the API key, the database password,
     * the ops token; values a runtime does not take are left out.
     */
    List<String> secrets();

    /** The runtime's readiness as its probe endpoint answers it (or, with no HTTP endpoint, Camel's readiness checks). */
    Readiness readiness() throws Exception;

    /** The database the runtime stores into (the test's own connection to it). */
    DataSource database();

    /** Stops the database cleanly; the runtime keeps its settings and must notice. */
    void stopDatabase() throws Exception;

    /** Starts the database again, on the same address and data. */
    void startDatabase() throws Exception;

    /**
     * Takes a route of the bundle out of the running runtime, as if its file had been left out of the route files:
     * stopped and removed from the CamelContext.
     */
    void leaveOutRoute(String routeId) throws Exception;

    /** Everything the runtime has logged since it started, at the levels it logs by default. */
    String log() throws Exception;

    /**
     * Stops the runtime as its SIGTERM handler does (camel-main's stop, Spring's context close, the CamelContext's
     * close) and returns once it has stopped; false, without stopping, where the test cannot stop it because the
     * runtime hosts the test itself.
     */
    default boolean stopAsOnSigterm() throws Exception {
        return false;
    }

    /** The readiness a probe reads: up or down, and the text that names the checks. */
    record Readiness(boolean up, String report) {
    }
}
