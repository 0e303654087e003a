package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TCP proxy in front of one server (PostgreSQL) that can {@link #freeze()}: from then until {@link #thaw()} no byte
 * passes in either direction and no socket is closed, which is what a network that drops packets looks like to both
 * ends (a black-holed route, a dead NAT entry, a security group changed under a live connection): writes go into the
 * socket buffers, reads wait, nothing fails. New connections while frozen are accepted and then get no answer either.
 * After the thaw every connection carries on where it stopped, the bytes held on the way delivered in order.
 */
public final class FreezingProxy implements AutoCloseable {
    private final int backendPort;
    private final ServerSocket listener;
    private final ExecutorService pumps = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "freezing-proxy");
        t.setDaemon(true);
        return t;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final Object gate = new Object();
    private boolean frozen; // guarded by gate
    private volatile boolean running = true;

    public FreezingProxy(int backendPort) {
        this.backendPort = backendPort;
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
        Socket upstream = new Socket();
        try {
            awaitThawed();
            upstream.setTcpNoDelay(true);
            upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), backendPort), 1000);
            client.setTcpNoDelay(true);
        } catch (IOException | InterruptedException e) {
            closeQuietly(client);
            closeQuietly(upstream);
            return;
        }
        open.add(client);
        open.add(upstream);
        pumps.execute(() -> pump(client, upstream));
        pump(upstream, client);
    }

    /** Copies one direction, holding each chunk while frozen, until either side ends; then closes both. */
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
