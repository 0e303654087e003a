package dev.metakit.inbox.ingest;

import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SharedInbox;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Slow clients against the public endpoint, with the default limits (request read within 10 s, idle connections
 * closed after 60 s): 500 connections (opened over the first second) that send their request head, or their body,
 * one byte per second, replaced as they are closed, while genuine deliveries keep coming. Every genuine delivery must
 * get its 2xx without waiting for the slow connections' deadline, and every slow connection must be closed by the
 * server at its read deadline: not before 10 s, and each of the first 500 by the run's end. The run lasts its length,
 * and past it until the first 500 are closed: a loaded machine's event loops fire the deadline late (seconds at a load
 * of 25), which is the machine's speed, not the guard's. How fast the acks are and how late the deadline fired are
 * printed ({@code bench/faults.sh} measures them), not asserted. The short run is part of
 * {@code mvn verify}; the long one (tag {@code fault-long}, {@code bench/faults.sh}) holds the load for 70 s and also
 * watches an idle connection get closed after its minute.
 */
class SlowClientsFaultTest {
    private static final int SLOW_CONNECTIONS = 500;
    private static final long READ_DEADLINE_MILLIS = 10_000;
    /** a closed slow connection must have lived at least this long: a shorter life means another cause closed it */
    private static final long EARLIEST_CLOSE_MILLIS = READ_DEADLINE_MILLIS - 500;
    /** a genuine delivery answered later than this waited behind the slow connections until their deadline */
    private static final long ACK_LIMIT_MILLIS = READ_DEADLINE_MILLIS;
    private static final long RAMP_UP_NANOS = 1_000_000_000L;
    /**
     * how long past its length a run waits for the last of the first 500 to be closed: a deadline that has not fired
     * three deadlines after it was due is not late, it is missing
     */
    private static final long LATE_CLOSE_GRACE_NANOS = 3 * READ_DEADLINE_MILLIS * 1_000_000L;

    @RegisterExtension
    static final SharedInbox shared = SharedInbox.ingestOnly();

    @Test
    void fiveHundredSlowConnectionsNeitherDelayGenuineDeliveriesNorOutliveTheReadDeadline() throws Exception {
        load(Duration.ofSeconds(17), false);
    }

    @Test
    @Tag("fault-long")
    void seventySecondsOfSlowClientsAndAnIdleConnectionClosedAfterItsMinute() throws Exception {
        load(Duration.ofSeconds(70), true);
    }

    /** One slow connection: sends the next byte of its request each second. */
    private static final class Slow {
        final SocketChannel channel;
        final byte[] request;
        final long openedAt = System.nanoTime();
        final int index;
        final int burst;
        int sent;
        long closedAt;

        Slow(int port, byte[] request, int index, int burst) throws IOException {
            this.channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            this.channel.configureBlocking(false);
            this.request = request;
            this.index = index;
            this.burst = burst;
        }

        /** sends the burst (a whole head) at once, then one byte per call */
        void sendNext() {
            int n = sent == 0 ? Math.max(1, burst) : 1;
            try {
                int from = sent % request.length;
                channel.write(ByteBuffer.wrap(request, from, Math.min(n, request.length - from)));
                sent += n;
            } catch (IOException e) {
                closed();
            }
        }

        boolean poll(ByteBuffer scratch) {
            try {
                scratch.clear();
                if (channel.read(scratch) < 0) {
                    closed();
                }
            } catch (IOException e) {
                closed();
            }
            return closedAt != 0;
        }

        void closed() {
            if (closedAt == 0) {
                closedAt = System.nanoTime();
            }
        }

        long lifeMillis() {
            return (closedAt - openedAt) / 1_000_000;
        }
    }

    private static Slow slowConnection(int i) throws IOException {
        if (i % 2 == 0) {
            // a request head that never ends, one byte per second
            String head = "POST /hooks/metakit HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + "a".repeat(4000);
            return new Slow(inbox().httpPort(), head.getBytes(StandardCharsets.US_ASCII), i, 1);
        }
        // a whole head at once, then the body one byte per second
        String head = "POST /hooks/metakit HTTP/1.1\r\nHost: localhost\r\nX-MetaKit-Signature: t=1,v1="
                + "0".repeat(64) + "\r\nContent-Length: 100000\r\n\r\n";
        byte[] request = (head + "{".repeat(100_000)).getBytes(StandardCharsets.US_ASCII);
        return new Slow(inbox().httpPort(), request, i, head.length());
    }

    private void load(Duration duration, boolean watchIdle) throws Exception {
        // one delivery before the load: the first request of a fresh JVM pays for class loading and JIT, which is not
        // what this test measures
        assertThat(inbox().postSigned("{\"event\":\"warm.up\"}".getBytes(StandardCharsets.UTF_8), "warm.up")
                .statusCode()).isEqualTo(200);
        double clientClosedBefore = clientClosed(inbox().metrics());
        long loadStart = System.nanoTime();
        Set<Slow> open = new LinkedHashSet<>();
        List<Slow> closed = new ArrayList<>();
        Slow idle = watchIdle ? new Slow(inbox().httpPort(), new byte[0], -1, 0) : null;

        List<long[]> acks = new CopyOnWriteArrayList<>(); // {status, millis}
        AtomicBoolean running = new AtomicBoolean(true);
        Thread genuine = new Thread(() -> sendGenuine(running, acks), "genuine-deliveries");
        genuine.start();

        long end = System.nanoTime() + duration.toNanos();
        long lastChance = end + LATE_CLOSE_GRACE_NANOS;
        int firstClosed = 0;
        long nextByte = System.nanoTime();
        ByteBuffer scratch = ByteBuffer.allocate(4096);
        long start = System.nanoTime();
        int opened = 0;
        try (Selector selector = Selector.open()) {
            if (idle != null) {
                idle.channel.register(selector, SelectionKey.OP_READ, idle);
            }
            // a closed connection shows up as readable (end of stream): only those are looked at between the ticks
            for (long now = System.nanoTime(); now < end || firstClosed < SLOW_CONNECTIONS && now < lastChance;
                 now = System.nanoTime()) {
                // the 500 are opened over the first second (as an attacker's script would), then kept at 500
                int due = (int) Math.min(SLOW_CONNECTIONS, (now - start) * SLOW_CONNECTIONS / RAMP_UP_NANOS + 1);
                while (opened < due) {
                    Slow s = slowConnection(opened++);
                    s.channel.register(selector, SelectionKey.OP_READ, s);
                    open.add(s);
                }
                if (now >= nextByte) {
                    nextByte += 1_000_000_000L;
                    for (Slow s : open) {
                        s.sendNext();
                    }
                }
                long until = System.nanoTime() < end ? Math.min(nextByte, end) : nextByte;
                long wait = opened < SLOW_CONNECTIONS ? 10 : (until - System.nanoTime()) / 1_000_000;
                selector.select(Math.max(1, wait));
                for (SelectionKey key : selector.selectedKeys()) {
                    Slow s = (Slow) key.attachment();
                    if (s.poll(scratch)) {
                        key.cancel();
                        s.channel.close();
                        if (s != idle) {
                            open.remove(s);
                            closed.add(s);
                            if (s.index < SLOW_CONNECTIONS) {
                                firstClosed++;
                            }
                            Slow replacement = slowConnection(opened++); // the load stays at 500
                            replacement.channel.register(selector, SelectionKey.OP_READ, replacement);
                            open.add(replacement);
                        }
                    }
                }
                selector.selectedKeys().clear();
            }
        }
        running.set(false);
        genuine.join();
        String metrics = inbox().metrics(); // before the test hangs up on the slow connections still open
        for (Slow s : open) {
            s.channel.close();
        }

        long slowCut = closed.stream().filter(s -> s.lifeMillis() >= EARLIEST_CLOSE_MILLIS).count();
        long maxLife = closed.stream().mapToLong(Slow::lifeMillis).max().orElse(-1);
        long[] ackMillis = acks.stream().mapToLong(a -> a[1]).sorted().toArray();
        long maxAck = ackMillis.length == 0 ? -1 : ackMillis[ackMillis.length - 1];
        long medianAck = ackMillis.length == 0 ? -1 : ackMillis[ackMillis.length / 2];
        System.out.printf("FAULT slow-clients %d s (ran %d ms): %d slow connections opened, %d closed by the server"
                        + " (life %d..%d ms), %d genuine deliveries, ack median %d ms, slowest %d ms%s%n",
                duration.toSeconds(), (System.nanoTime() - start) / 1_000_000, opened,
                closed.size(), closed.stream().mapToLong(Slow::lifeMillis).min().orElse(-1), maxLife, acks.size(),
                medianAck, maxAck,
                idle == null ? "" : ", idle connection closed after "
                        + (idle.closedAt == 0 ? "never" : idle.lifeMillis() + " ms"));

        acks.stream().filter(a -> a[1] > 200).forEach(a -> System.out.printf(
                "FAULT slow-clients: ack of %d ms at +%d ms%n", a[1], (a[2] - loadStart) / 1_000_000));
        // genuine deliveries throughout the load (one at a time, 100 ms apart: how many depends on the machine)
        assertThat(acks).as("genuine deliveries sent").hasSizeGreaterThan((int) duration.toSeconds());
        assertThat(acks).as("every genuine delivery answered 2xx, none held until the slow ones' %d ms deadline",
                        ACK_LIMIT_MILLIS)
                .allSatisfy(a -> {
                    assertThat(a[0]).isBetween(200L, 299L);
                    assertThat(a[1]).isLessThan(ACK_LIMIT_MILLIS);
                });
        // the first 500, opened in the run's first second, all closed by the server while the run went on
        assertThat(closed.stream().filter(s -> s.index < SLOW_CONNECTIONS))
                .as("the first %d slow connections closed by the server", SLOW_CONNECTIONS).hasSize(SLOW_CONNECTIONS);
        assertThat(closed).as("each closed at its read deadline, not before %d ms", EARLIEST_CLOSE_MILLIS)
                .allSatisfy(s -> assertThat(s.lifeMillis()).isGreaterThanOrEqualTo(EARLIEST_CLOSE_MILLIS));
        assertThat(metrics).containsPattern(
                "metakit_http_connections_cut_total\\{[^}]*reason=\"slow\"[^}]*} " + "\\d{3,}");
        assertThat(clientClosed(metrics)).as("connections the server cut are not counted as clients hanging up")
                .isEqualTo(clientClosedBefore);
        if (idle != null) {
            assertThat(idle.closedAt).as("the idle connection was closed").isNotZero();
            assertThat(idle.lifeMillis()).isBetween(59_000L, 63_000L);
            idle.channel.close();
        }
        assertThat(slowCut).isEqualTo(closed.size());
    }

    private static double clientClosed(String metrics) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "metakit_webhook_rejected_total\\{[^}]*reason=\"client_closed\"[^}]*} (\\S+)").matcher(metrics);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private static void sendGenuine(AtomicBoolean running, List<long[]> acks) {
        long n = 0;
        while (running.get()) {
            byte[] body = ("{\"event\":\"position.opened\",\"account_id\":7,\"data\":{\"ticket\":" + (n++) + "}}")
                    .getBytes(StandardCharsets.UTF_8);
            long start = System.nanoTime();
            long status;
            try {
                HttpResponse<String> r = inbox().postSigned(body, "position.opened");
                status = r.statusCode();
            } catch (IOException e) {
                status = -1;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            acks.add(new long[]{status, (System.nanoTime() - start) / 1_000_000, start});
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static RunningInbox inbox() {
        return shared.inbox();
    }
}
