package dev.metakit.inbox.sandbox;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.IntUnaryOperator;

/** A webhook consumer stand-in on 127.0.0.1:0 that records every request and answers what the test says. */
final class TestReceiver implements AutoCloseable {
    /** Answer code meaning: never answer (until the receiver closes). */
    static final int HANG = -1;
    /**
     * The contract's retry schedule 50 times faster, for a test sender, with the contract's own 5 s request timeout:
     * a loaded CI machine must not turn acks into timeouts.
     */
    static final DeliverySchedule FAST = DeliverySchedule.contract().scaled(0.02)
            .withRequestTimeout(Duration.ofSeconds(5));

    record Received(long arrivedNanos, String event, String signature, String contentType, byte[] body) {
        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        long t() {
            return Long.parseLong(signature.split(",")[0].substring(2));
        }

        List<String> v1s() {
            return List.of(signature.split(",")).stream().filter(p -> p.startsWith("v1=")).map(p -> p.substring(3))
                    .toList();
        }

        List<String> keys() {
            return v1s().stream().map(v1 -> t() + ":" + v1).toList();
        }
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final CountDownLatch closing = new CountDownLatch(1);

    /** {@code answer} maps the request's index (0-based, in arrival order) to a status, or {@link #HANG}. */
    TestReceiver(IntUnaryOperator answer) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            long arrived = System.nanoTime();
            byte[] body = exchange.getRequestBody().readAllBytes();
            int index;
            synchronized (received) {
                index = received.size();
                received.add(new Received(arrived, exchange.getRequestHeaders().getFirst("X-MetaKit-Event"),
                        exchange.getRequestHeaders().getFirst("X-MetaKit-Signature"),
                        exchange.getRequestHeaders().getFirst("Content-Type"), body));
            }
            int status = answer.applyAsInt(index);
            if (status == HANG) {
                try {
                    closing.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                exchange.close();
                return;
            }
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
        server.start();
    }

    static TestReceiver always(int status) throws IOException {
        return new TestReceiver(i -> status);
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks/metakit");
    }

    List<Received> received() {
        return List.copyOf(received);
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}
