package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for the servers the tests start (the bundle's, a child jar's, Kafka's, a PostgreSQL a test stops and starts
 * again), chosen before the server binds them. {@code new ServerSocket(0)} would hand out a port of the kernel's
 * ephemeral range (32768-60999 on Linux), which every outgoing connection of the machine draws from too: between the
 * choice and the bind, a database or HTTP client connection of a test JVM running beside this one can take it
 * ("Address already in use"). So a port is drawn at random below that range, from a block of its own per test JVM
 * (surefire's and failsafe's fork number, {@code metakit.test.fork}), checked free, and <em>reserved</em> for the
 * JVM's life by a lock on a file named for it in the machine's temporary folder: a test JVM of another build on the
 * same machine (its forks numbered alike, so drawing from the same blocks) skips a port this one has chosen but not
 * yet bound. The operating system lets go of the locks when the JVM ends, however it ends.
 */
public final class TestPorts {
    private static final int FIRST = 20_000;
    private static final int BLOCK = 1_500;
    private static final int BLOCKS = 8;
    private static final Path RESERVATIONS = Path.of(System.getProperty("java.io.tmpdir"), "metakit-test-ports");
    /** The locks held, kept reachable so that none is released before the JVM ends. */
    private static final Map<Integer, FileLock> RESERVED = new ConcurrentHashMap<>();

    private TestPorts() {
    }

    /** A port no other test JVM on this machine has reserved, free now, and reserved for this JVM from now on. */
    public static int free() {
        int base = FIRST + Math.floorMod(fork(), BLOCKS) * BLOCK;
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = base + ThreadLocalRandom.current().nextInt(BLOCK);
            if (!RESERVED.containsKey(port) && reserve(port)) {
                if (bindable(port)) {
                    return port;
                }
                // taken by something that does not reserve (a server outside the tests): stays reserved, unused
            }
        }
        throw new IllegalStateException("no free port in " + base + ".." + (base + BLOCK - 1));
    }

    /** {@code fork-<n>} as surefire and failsafe set it (a bare placeholder would be emptied by Maven), else 0. */
    private static int fork() {
        String digits = System.getProperty("metakit.test.fork", "").replaceAll("\\D", "");
        return digits.isEmpty() ? 0 : Integer.parseInt(digits);
    }

    private static boolean reserve(int port) {
        try {
            Files.createDirectories(RESERVATIONS);
            FileChannel channel = FileChannel.open(RESERVATIONS.resolve(port + ".lock"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException heldHere) {
                lock = null;
            }
            if (lock == null || RESERVED.putIfAbsent(port, lock) != null) {
                channel.close();
                return false;
            }
            return true;
        } catch (java.nio.file.AccessDeniedException anotherUsers) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("could not reserve test port " + port + " under " + RESERVATIONS, e);
        }
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(port));
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }
}
