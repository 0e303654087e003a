package dev.metakit.inbox.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * The change feed's downstream for process tests: an HTTP endpoint the outlet route of {@code changes.camel.yaml}
 * POSTs to (camel-http, which the jar has), one path per instance ({@link #url}), recording every change it takes in
 * the order it took it, with which instance sent it and when ({@link System#nanoTime()}).
 */
public final class RecordingFeedOutlet implements AutoCloseable {
    /**
     * One change as it arrived: {@code id} is {@code MetaKitChangeId}, {@code <account>:<seq>}; {@code nanos} on this
     * JVM's {@link System#nanoTime()}, {@code acceptedAt} on the wall clock (the database's, on this machine: what a
     * change's {@code reconciled_at} is compared with).
     */
    public record Receipt(String instance, String id, long account, long seq, long nanos, Instant acceptedAt) {
    }

    private final HttpServer server;
    private final List<Receipt> receipts = new ArrayList<>();
    private volatile boolean refusing;
    private volatile long answerAfterMillis;

    public RecordingFeedOutlet() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/feed/", this::take);
        server.start();
    }

    /** The outlet endpoint URI for one instance's routes. */
    public String url(String instance) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/feed/" + instance;
    }

    private void take(HttpExchange ex) throws IOException {
        try (ex) {
            ex.getRequestBody().readAllBytes();
            String instance = ex.getRequestURI().getPath().substring("/feed/".length());
            String id = ex.getRequestHeaders().getFirst("MetaKitChangeId");
            if (id == null || id.indexOf(':') < 0) {
                ex.sendResponseHeaders(400, -1);
                return;
            }
            if (refusing) {
                ex.sendResponseHeaders(503, -1);
                return;
            }
            if (answerAfterMillis > 0) {
                try {
                    Thread.sleep(answerAfterMillis); // a receiver's own latency (a benchmark's), not a wait for a condition
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            long nanos = System.nanoTime();
            Instant acceptedAt = Instant.now();
            int colon = id.indexOf(':');
            Receipt r = new Receipt(instance, id, Long.parseLong(id.substring(0, colon)),
                    Long.parseLong(id.substring(colon + 1)), nanos, acceptedAt);
            synchronized (receipts) {
                receipts.add(r);
            }
            ex.sendResponseHeaders(200, -1);
        }
    }

    /** An outage of the downstream: while {@code true} every change is answered 503 and not taken. */
    public void refuse(boolean refusing) {
        this.refusing = refusing;
    }

    /** A receiver that is not instant: each change is taken (and answered) {@code millis} after it arrived. */
    public void answerAfter(long millis) {
        this.answerAfterMillis = millis;
    }

    /** Everything taken so far, in arrival order. */
    public List<Receipt> receipts() {
        synchronized (receipts) {
            return List.copyOf(receipts);
        }
    }

    /** The first arrival of each change id (a repeat is not a new arrival), in arrival order. */
    public Map<String, Receipt> firstArrivals() {
        Map<String, Receipt> first = new LinkedHashMap<>();
        for (Receipt r : receipts()) {
            first.putIfAbsent(r.id(), r);
        }
        return first;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
