package dev.metakit.inbox.conformance;

import dev.metakit.inbox.sandbox.Sandbox;
import io.opentelemetry.sdk.trace.data.SpanData;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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

    /** The MetaKit the runtime reconciles against: the sandbox's API and market, which delivers what it trades. */
    Sandbox metakit();

    /**
     * Whether the test traces the runtime with the host's own tracing (the standalone run's {@code OTEL_*}, a Spring
     * Boot host's Micrometer Tracing, a Quarkus host's OpenTelemetry), its spans kept by OpenTelemetry's SDK testing
     * exporter ({@link #finishedSpans()}).
     */
    default boolean traced() {
        return false;
    }

    /** The spans the runtime's tracing has finished so far (none when it is not {@link #traced()}). */
    default List<SpanData> finishedSpans() {
        return List.of();
    }

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
        private static final HttpClient HTTP = HttpClient.newHttpClient();

        /** The readiness as a probe reads it from the runtime's HTTP {@code endpoint}: up when it answers 200. */
        public static Readiness probe(URI endpoint) throws IOException, InterruptedException {
            HttpResponse<String> ready = HTTP.send(HttpRequest.newBuilder(endpoint).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Readiness(ready.statusCode() == 200, ready.body());
        }
    }
}
