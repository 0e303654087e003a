package dev.metakit.inbox.support;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for the servers the tests start (the bundle's, a child jar's, Kafka's, a PostgreSQL a test stops and starts
 * again), chosen before the server binds them. {@code new ServerSocket(0)} would hand out a port of the kernel's
 * ephemeral range (32768-60999 on Linux), which every outgoing connection of the machine draws from too: between the
 * choice and the bind, a database or HTTP client connection of a test JVM running beside this one can take it
 * ("Address already in use"). So a port is drawn at random below that range, from a block of its own per test JVM
 * (surefire's and failsafe's fork number, {@code metakit.test.fork}), never twice in one JVM, and checked free.
 */
final class TestPorts {
    private static final int FIRST = 20_000;
    private static final int BLOCK = 1_500;
    private static final int BLOCKS = 8;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private TestPorts() {
    }

    static int free() {
        int base = FIRST + Math.floorMod(fork(), BLOCKS) * BLOCK;
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = base + ThreadLocalRandom.current().nextInt(BLOCK);
            if (!HANDED_OUT.contains(port) && bindable(port) && HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port in " + base + ".." + (base + BLOCK - 1));
    }

    /** {@code fork-<n>} as surefire and failsafe set it (a bare placeholder would be emptied by Maven), else 0. */
    private static int fork() {
        String digits = System.getProperty("metakit.test.fork", "").replaceAll("\\D", "");
        return digits.isEmpty() ? 0 : Integer.parseInt(digits);
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
