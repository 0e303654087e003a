package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One address in front of several instances, the way an L4 load balancer (a Kubernetes Service) is: each new client
 * connection goes to the next backend in turn, and a backend that refuses the connection is skipped for the next one.
 * A connection stays on its backend for its lifetime, so when a backend dies the requests in flight on it fail (the
 * client sees the connection close without an answer) and the client's next connection lands on a live backend.
 */
public final class RoundRobinProxy implements AutoCloseable {
    private static final int CONNECT_TIMEOUT_MILLIS = 1000;

    private final List<Integer> backendPorts;
    private final ServerSocket listener;
    private final ExecutorService pumps = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "round-robin-proxy");
        t.setDaemon(true);
        return t;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicLong[] connections;
    private final AtomicLong refusedConnects = new AtomicLong();
    private volatile boolean running = true;

    public RoundRobinProxy(List<Integer> backendPorts) {
        this.backendPorts = List.copyOf(backendPorts);
        connections = new AtomicLong[backendPorts.size()];
        for (int i = 0; i < connections.length; i++) {
            connections[i] = new AtomicLong();
        }
        try {
            listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        pumps.execute(this::accept);
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** The webhook endpoint behind this address. */
    public URI webhookUri() {
        return URI.create("http://127.0.0.1:" + port() + "/hooks/metakit");
    }

    /** Client connections handed to the i-th backend so far. */
    public long connections(int backend) {
        return connections[backend].get();
    }

    /** Connection attempts a backend refused (each one skipped to the next backend). */
    public long refusedConnects() {
        return refusedConnects.get();
    }

    private void accept() {
        while (running) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            pumps.execute(() -> connect(client));
        }
    }

    private void connect(Socket client) {
        int first = Math.floorMod(next.getAndIncrement(), backendPorts.size());
        for (int i = 0; i < backendPorts.size(); i++) {
            int backend = (first + i) % backendPorts.size();
            Socket upstream = new Socket();
            try {
                upstream.setTcpNoDelay(true);
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), backendPorts.get(backend)),
                        CONNECT_TIMEOUT_MILLIS);
            } catch (IOException refused) {
                refusedConnects.incrementAndGet();
                closeQuietly(upstream);
                continue;
            }
            connections[backend].incrementAndGet();
            try {
                client.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                return;
            }
            open.add(client);
            open.add(upstream);
            pumps.execute(() -> pump(client, upstream));
            pump(upstream, client);
            return;
        }
        // no backend takes connections: the client sees its connection closed, as with a load balancer
        closeQuietly(client);
    }

    /** Copies one direction until either side ends, then closes both: a half-dead pair is no use to HTTP. */
    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException ended) {
            // reset or closed by the other pump: the pair is over either way
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void closeQuietly(Socket s) {
        open.remove(s);
        try {
            s.close();
        } catch (IOException ignored) {
            // closing is all that was wanted
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            listener.close();
        } catch (IOException ignored) {
            // stopping anyway
        }
        open.forEach(this::closeQuietly);
        pumps.shutdownNow();
    }
}
