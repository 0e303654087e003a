package dev.metakit.inbox.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The bundle's readiness as its management server on localhost answers it. */
public final class HealthProbe {
    private HealthProbe() {
    }

    /** The status of {@code GET /observe/health}, or -1 when nothing answers within {@code timeout}. */
    public static int status(HttpClient http, int managementPort, Duration timeout) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort
                    + "/observe/health")).timeout(timeout).GET().build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
