package dev.metakit.inbox.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Probes health paths of the management server one after the other, a new probe every {@code every}, each with a
 * client timeout far above the deadline under test (so a slow answer is measured, not cut), the way an operator's curl
 * or a load balancer's check does; records every answer with its timing and body.
 */
public final class HealthWatch implements AutoCloseable {
    /** One probe: its path, when it started, how long it took, its status (-1: no answer) and body. */
    public record Probe(String path, long startNanos, long millis, int status, String body) {
    }

    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(10);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final ConcurrentLinkedQueue<Probe> probes = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean running = true;

    private HealthWatch(RunningInbox inbox, Duration every, List<String> paths) {
        thread = new Thread(() -> {
            long next = System.nanoTime();
            int i = 0;
            while (running) {
                String path = paths.get(i++ % paths.size());
                probes.add(probe(inbox.managementUri(path), path));
                // pacing, not waiting for a condition
                next += every.toNanos();
                LockSupport.parkNanos(Math.max(0, next - System.nanoTime()));
            }
        }, "health-watch");
        thread.setDaemon(true);
        thread.start();
    }

    public static HealthWatch start(RunningInbox inbox, Duration every, String... paths) {
        return new HealthWatch(inbox, every, List.of(paths));
    }

    private Probe probe(URI uri, String path) {
        long start = System.nanoTime();
        int status;
        String body;
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(CLIENT_TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            status = r.statusCode();
            body = r.body();
        } catch (IOException e) {
            status = -1;
            body = e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = -1;
            body = "interrupted";
        }
        return new Probe(path, start, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), status, body);
    }

    public List<Probe> probes() {
        return List.copyOf(probes);
    }

    /** Stops probing (after the probe in flight) and returns every probe. */
    public List<Probe> stop() throws InterruptedException {
        running = false;
        thread.join(CLIENT_TIMEOUT.plusSeconds(2).toMillis());
        return probes();
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
