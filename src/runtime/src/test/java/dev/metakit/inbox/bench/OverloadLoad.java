package dev.metakit.inbox.bench;

import dev.metakit.inbox.sandbox.WebhookSender;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Open-loop overload generator (not a test: run by {@code bench/overload-bench.sh}, never by {@code mvn verify}).
 * Deliveries are due at a constant arrival rate per phase, whatever the answers: delivery i of a phase at its start
 * plus i/rate. Each of {@code --connections} keep-alive connections (raw HTTP/1.1 on a socket, cheap for the
 * generator on a small machine) sends the next due delivery when it is free, signed then (unique {@code
 * position.opened}, about 400 bytes), and waits for its answer. A delivery sent after it was due (every connection
 * was busy) is counted late; its latency counts from when it was due, as a sender's would.
 *
 * <p>Reported per phase: deliveries due and sent, the share answered 2xx and 503 (and how many 503 carried
 * Retry-After), the latency of each (p50/p99/max, from when it was due), the 2xx later than the bound, the sending lag
 * (p99); a per-second timeline of 2xx and refusals by the second each was due; then over JDBC, the deliveries answered
 * 2xx missing from {@code webhook_inbox}.
 *
 * <pre>
 * java -cp target/test-classes:target/metakit-inbox.jar dev.metakit.inbox.bench.OverloadLoad \
 *   --url http://127.0.0.1:18480/hooks/metakit --secret S --phases 3000x60,6000x60,1500x20 --bound-ms 2000 \
 *   --connections 800 --jdbc-url jdbc:postgresql://127.0.0.1:5432/db --db-user u --db-password p
 * </pre>
 * A phase {@code RxS} makes R deliveries a second due for S seconds; phases follow each other without a pause.
 */
public final class OverloadLoad {
    /** One delivery: its phase, when it was due, sent and answered (System.nanoTime), status (-1: no answer). */
    private record Answer(int phase, long dueNanos, long sentNanos, long endNanos, int status, boolean retryAfter) {
        /** from when it was due: what a sender saw, the generator's own lag included */
        long millis() {
            return TimeUnit.NANOSECONDS.toMillis(endNanos - dueNanos);
        }

        /** from when it was sent: what the consumer answered for */
        long serverMillis() {
            return TimeUnit.NANOSECONDS.toMillis(endNanos - sentNanos);
        }

        boolean acked() {
            return status >= 200 && status < 300;
        }
    }

    private record Phase(int rate, int seconds) {
    }

    /** When each delivery is due: the phases one after the other from {@code start}. */
    private record Schedule(List<Phase> phases, long start) {
        /** phase index and due time of delivery {@code n} (counted over every phase), or null past the last phase */
        long[] due(long n) {
            long firstOfPhase = 0;
            long phaseStart = start;
            for (int p = 0; p < phases.size(); p++) {
                Phase phase = phases.get(p);
                long count = (long) phase.rate() * phase.seconds();
                if (n < firstOfPhase + count) {
                    return new long[]{p, phaseStart + (n - firstOfPhase) * TimeUnit.SECONDS.toNanos(1) / phase.rate()};
                }
                firstOfPhase += count;
                phaseStart += TimeUnit.SECONDS.toNanos(phase.seconds());
            }
            return null;
        }
    }

    public static void main(String[] args) throws Exception {
        URI url = URI.create(arg(args, "--url"));
        String secret = arg(args, "--secret");
        long boundMs = Long.parseLong(arg(args, "--bound-ms"));
        int connections = Integer.parseInt(arg(args, "--connections"));
        List<Phase> phases = Arrays.stream(arg(args, "--phases").split(",")).map(p -> p.split("x"))
                .map(p -> new Phase(Integer.parseInt(p[0]), Integer.parseInt(p[1]))).toList();
        // the connections are opened before the first delivery is due
        Schedule schedule = new Schedule(phases, System.nanoTime() + TimeUnit.SECONDS.toNanos(3));
        AtomicLong next = new AtomicLong();
        ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> ackedKeys = new ConcurrentLinkedQueue<>();
        long ticketBase = System.currentTimeMillis() * 1000;
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            Thread t = new Thread(() -> connection(url, secret, schedule, next, ticketBase, answers, ackedKeys),
                    "overload-" + i);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        report(phases, new ArrayList<>(answers), schedule.start(), boundMs);
        String jdbc = arg(args, "--jdbc-url");
        if (jdbc != null) {
            checkAckedStored(new ArrayList<>(ackedKeys), jdbc, arg(args, "--db-user"), arg(args, "--db-password"));
        }
    }

    private static void connection(URI url, String secret, Schedule schedule, AtomicLong next, long ticketBase,
                                   ConcurrentLinkedQueue<Answer> answers, ConcurrentLinkedQueue<String> ackedKeys) {
        Socket socket = null;
        OutputStream out = null;
        InputStream in = null;
        byte[] buf = new byte[8192];
        try {
            socket = connect(url);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream(), 4096);
        } catch (IOException e) {
            close(socket);
            socket = null; // connected again at its first delivery
        }
        for (long n = next.getAndIncrement(); ; n = next.getAndIncrement()) {
            long[] due = schedule.due(n);
            if (due == null) {
                break;
            }
            LockSupport.parkNanos(due[1] - System.nanoTime()); // the arrival rate: each delivery at its time
            long ticket = ticketBase + n;
            byte[] body = ("{\"event\":\"position.opened\",\"account_id\":" + (1 + n % 50) + ",\"created_at\":\""
                    + java.time.Instant.now() + "\",\"data\":{\"ticket\":" + ticket + ",\"symbol\":\"EURUSD\","
                    + "\"type\":\"buy\",\"volume\":0.10,\"price_open\":1.08450}}").getBytes(StandardCharsets.UTF_8);
            long t = System.currentTimeMillis() / 1000;
            String v1 = WebhookSender.sign(secret, t, body);
            byte[] head = ("POST " + url.getPath() + " HTTP/1.1\r\nHost: " + url.getHost() + ":" + url.getPort()
                    + "\r\nContent-Type: application/json\r\n" + WebhookSender.SIGNATURE_HEADER + ": "
                    + WebhookSender.signatureHeader(t, List.of(v1)) + "\r\n" + WebhookSender.EVENT_HEADER
                    + ": position.opened\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII);
            long sent = System.nanoTime();
            int status = -1;
            boolean retryAfter = false;
            try {
                if (socket == null) {
                    socket = connect(url);
                    out = socket.getOutputStream();
                    in = new BufferedInputStream(socket.getInputStream(), 4096);
                }
                out.write(head);
                out.write(body);
                out.flush();
                LoadResponse response = LoadResponse.read(in, buf);
                status = response.status();
                retryAfter = response.retryAfter() != null;
                if (response.close()) {
                    socket.close();
                    socket = null;
                }
            } catch (IOException | RuntimeException e) {
                close(socket);
                socket = null;
            }
            Answer a = new Answer((int) due[0], due[1], sent, System.nanoTime(), status, retryAfter);
            answers.add(a);
            if (a.acked()) {
                ackedKeys.add(t + ":" + v1);
            }
        }
        close(socket);
    }

    private static Socket connect(URI url) throws IOException {
        Socket socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(30_000);
        socket.connect(new InetSocketAddress(url.getHost(), url.getPort()), 5000);
        return socket;
    }

    private static void close(Socket socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // done with it
            }
        }
    }

    private static void report(List<Phase> phases, List<Answer> all, long start, long boundMs) {
        for (int p = 0; p < phases.size(); p++) {
            int phase = p;
            List<Answer> in = all.stream().filter(a -> a.phase() == phase).toList();
            List<Answer> acked = in.stream().filter(Answer::acked).toList();
            List<Answer> refused = in.stream().filter(a -> a.status() == 503).toList();
            long lagP99 = percentile(in.stream().mapToLong(a -> TimeUnit.NANOSECONDS.toMillis(a.sentNanos()
                    - a.dueNanos())).sorted().toArray(), 0.99);
            System.out.printf(Locale.ROOT, "RESULT phase %d (%d/s due for %d s): sent %d; 2xx %d (%.1f%%, %.0f/s);"
                            + " 503 %d (%.1f%%, %d with Retry-After); other %d; from sending: 2xx ms p50/p99/max %s,"
                            + " 503 ms p50/p99/max %s, 2xx later than %d ms: %d; from due: 2xx ms p50/p99/max %s, 503"
                            + " ms p50/p99/max %s; sending lag p99 %d ms%n",
                    p + 1, phases.get(p).rate(), phases.get(p).seconds(), in.size(), acked.size(),
                    100.0 * acked.size() / Math.max(1, in.size()), acked.size() / (double) phases.get(p).seconds(),
                    refused.size(), 100.0 * refused.size() / Math.max(1, in.size()),
                    refused.stream().filter(Answer::retryAfter).count(), in.size() - acked.size() - refused.size(),
                    latencies(acked, Answer::serverMillis), latencies(refused, Answer::serverMillis), boundMs,
                    acked.stream().filter(a -> a.serverMillis() > boundMs).count(),
                    latencies(acked, Answer::millis), latencies(refused, Answer::millis), lagP99);
        }
        // per second in which the deliveries were due: how many were answered 2xx, and how many were refused
        int seconds = (int) all.stream().mapToLong(a -> TimeUnit.NANOSECONDS.toSeconds(a.dueNanos() - start)).max()
                .orElse(0) + 1;
        long[] ok = new long[seconds];
        long[] refused = new long[seconds];
        for (Answer a : all) {
            int s = (int) TimeUnit.NANOSECONDS.toSeconds(a.dueNanos() - start);
            if (a.acked()) {
                ok[s]++;
            } else {
                refused[s]++;
            }
        }
        StringBuilder line = new StringBuilder("TIMELINE second:2xx/refused");
        for (int s = 0; s < seconds; s++) {
            line.append(' ').append(s).append(':').append(ok[s]).append('/').append(refused[s]);
        }
        System.out.println(line);
    }

    private static String latencies(List<Answer> answers, java.util.function.ToLongFunction<Answer> millis) {
        long[] ms = answers.stream().mapToLong(millis).sorted().toArray();
        return ms.length == 0 ? "-" : percentile(ms, 0.5) + "/" + percentile(ms, 0.99) + "/" + ms[ms.length - 1];
    }

    private static long percentile(long[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)];
    }

    private static void checkAckedStored(List<String> acked, String jdbc, String user, String password)
            throws Exception {
        Set<String> found = new HashSet<>();
        try (Connection c = DriverManager.getConnection(jdbc, user, password);
             PreparedStatement ps = c.prepareStatement(
                     "select delivery_key from metakit.webhook_inbox where delivery_key = any(?)")) {
            ps.setArray(1, c.createArrayOf("text", acked.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
        }
        System.out.printf(Locale.ROOT, "RESULT answered 2xx %d, of them in webhook_inbox %d, missing %d%n",
                acked.size(), found.size(), acked.size() - found.size());
    }

    private static String arg(String[] args, String name) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return null;
    }
}
