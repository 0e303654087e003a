package dev.metakit.inbox.conformance;

import io.opentelemetry.sdk.trace.data.SpanData;
import org.apache.camel.CamelContext;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Optional;

/**
 * One runtime carrying the bundle, booted once for the whole {@link ConformanceChecks} class: its webhook as MetaKit
 * reaches it, its readiness as a probe reads it, the database it stores into (which the outage check stops and starts
 * again), its whole log, and the secrets it was given (none may appear in that log).
 */
public interface RuntimeUnderTest {
    /** What the runtime runs on: its webhook's port, the secrets it was given, its database, the sandbox as MetaKit. */
    RuntimeParts parts();

    /** The runtime's CamelContext, where the bundle's routes run. */
    CamelContext camelContext();

    /**
     * The spans the runtime's tracing has finished so far, where the test traces it with the host's own tracing (the
     * standalone run's {@code OTEL_*}, a Spring Boot host's Micrometer Tracing, a Quarkus host's OpenTelemetry) and
     * OpenTelemetry's SDK testing exporter keeps them; empty where the test runs the runtime untraced.
     */
    default Optional<List<SpanData>> finishedSpans() {
        return Optional.empty();
    }

    /** The runtime's readiness as its probe endpoint answers it (or, with no HTTP endpoint, Camel's readiness checks). */
    Readiness readiness() throws Exception;

    /**
     * Takes a route of the bundle out of the running runtime, as if its file had been left out of the route files:
     * stopped and removed from the CamelContext.
     */
    default void leaveOutRoute(String routeId) throws Exception {
        camelContext().getRouteController().stopRoute(routeId);
        camelContext().removeRoute(routeId);
    }

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
