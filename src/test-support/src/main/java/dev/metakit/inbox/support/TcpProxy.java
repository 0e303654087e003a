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
 * A TCP proxy on a loopback port in front of one or more servers: the network between the process tests' pieces.
 * <ul>
 *   <li>In front of several it is an L4 load balancer (a Kubernetes Service): each new client connection goes to the
 *   next backend in turn, and a backend that refuses the connection is skipped for the next one. A connection stays
 *   on its backend for its lifetime, so when a backend dies the requests in flight on it fail (the client sees the
 *   connection close without an answer) and the client's next connection lands on a live backend.</li>
 *   <li>{@link #freeze()}: from then until {@link #thaw()} no byte passes in either direction and no socket is closed,
 *   which is what a network that drops packets looks like to both ends (a black-holed route, a dead NAT entry, a
 *   security group changed under a live connection): writes go into the socket buffers, reads wait, nothing fails.
 *   New connections while frozen are accepted and then get no answer either. After the thaw every connection carries
 *   on where it stopped, the bytes held on the way delivered in order.</li>
 * </ul>
 */
public final class TcpProxy implements AutoCloseable {
    private static final int CONNECT_TIMEOUT_MILLIS = 1000;

    private final List<Integer> backendPorts;
    private final ServerSocket listener;
    private final ExecutorService pumps = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "tcp-proxy");
        t.setDaemon(true);
        return t;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicLong[] connections;
    private final AtomicLong refusedConnects = new AtomicLong();
    private final Object gate = new Object();
    private boolean frozen; // guarded by gate
    private volatile boolean running = true;

    public TcpProxy(int backendPort) {
        this(List.of(backendPort));
    }

    public TcpProxy(List<Integer> backendPorts) {
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

    /** Stops every byte in both directions, on open connections and new ones, closing nothing. */
    public void freeze() {
        synchronized (gate) {
            frozen = true;
        }
    }

    /** Lets the bytes through again, the ones held first. */
    public void thaw() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (gate) {
            while (frozen && running) {
                gate.wait();
            }
        }
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
        try {
            awaitThawed();
            client.setTcpNoDelay(true);
        } catch (IOException | InterruptedException e) {
            closeQuietly(client);
            return;
        }
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
            open.add(client);
            open.add(upstream);
            pumps.execute(() -> pump(client, upstream));
            pump(upstream, client);
            return;
        }
        // no backend takes connections: the client sees its connection closed, as with a load balancer
        closeQuietly(client);
    }

    /**
     * Copies one direction, holding each chunk while frozen, until either side ends; then closes both: a half-dead
     * pair is no use to HTTP or to PostgreSQL's protocol.
     */
    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            while (true) {
                awaitThawed();
                int n = in.read(buffer);
                if (n < 0) {
                    break;
                }
                // a chunk read just before the freeze waits here, not on the wire
                awaitThawed();
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException ended) {
            // reset or closed by the other pump, or the proxy closes: the pair is over either way
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
        thaw();
        try {
            listener.close();
        } catch (IOException ignored) {
            // stopping anyway
        }
        open.forEach(this::closeQuietly);
        pumps.shutdownNow();
    }
}
