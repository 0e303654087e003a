package dev.metakit.inbox.bench;

import dev.metakit.inbox.sandbox.WebhookSender;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ingest load generator (not a test: run by {@code bench/ingest-bench.sh}, never by {@code mvn verify}).
 *
 * <p>Pre-signs N unique {@code position.opened} deliveries (about 400 bytes, a unique ticket each, t = now) before
 * the timed phase, then drives them over C concurrent keep-alive connections, one synchronous request at a time per
 * connection, for a warm-up and a measured duration. Reports requests, throughput (2xx/s), ack latency percentiles,
 * non-2xx by status and transport errors; then checks over JDBC that every key that got a 2xx (warm-up included) is
 * in {@code webhook_inbox}.
 *
 * <p>Two clients: {@code raw} (default) writes each pre-serialised HTTP/1.1 request on a plain keep-alive socket
 * and parses the status line and Content-Length/chunked body, so the generator costs little CPU on a small machine;
 * {@code jdk} uses {@link HttpClient} with C threads doing synchronous sends.
 *
 * <pre>
 * java -cp target/test-classes:target/metakit-inbox.jar dev.metakit.inbox.bench.IngestLoad \
 *   --url http://127.0.0.1:8080/hooks/metakit --secret S --connections 64 --duration 15 --warmup 3 \
 *   --jdbc-url jdbc:postgresql://127.0.0.1:5432/db --db-user u --db-password p [--client raw|jdk]
 *   [--deliveries 300000] [--label ours-c64] [--result-file results.tsv]
 * </pre>
 */
public final class IngestLoad {

    private record Options(URI url, String secret, int connections, int durationSeconds, int warmupSeconds,
                           int deliveries, String client, String jdbcUrl, String dbUser, String dbPassword,
                           String label, String resultFile) {
    }

    /** One pre-signed delivery: its key and, for the raw client, the whole request bytes. */
    private record Signed(String key, String signatureHeader, byte[] body, byte[] rawRequest) {
    }

    /** What one connection saw. */
    private static final class WorkerStats {
        final List<String> ackedKeys = new ArrayList<>();
        long[] latMicros = new long[1 << 14];
        int latCount;
        long measured2xx;
        long measuredRequests;
        final Map<Integer, Long> non2xx = new HashMap<>();
        long errors;
        String firstError;

        void latency(long micros) {
            if (latCount == latMicros.length) {
                latMicros = Arrays.copyOf(latMicros, latCount * 2);
            }
            latMicros[latCount++] = micros;
        }
    }

    public static void main(String[] args) throws Exception {
        Options o = parse(args);
        System.out.printf(Locale.ROOT, "[%s] pre-signing %d deliveries ...%n", o.label(), o.deliveries());
        Signed[] signed = presign(o);
        AtomicInteger next = new AtomicInteger();
        WorkerStats[] stats = new WorkerStats[o.connections()];
        for (int i = 0; i < stats.length; i++) {
            stats[i] = new WorkerStats();
        }
        HttpClient jdk = "jdk".equals(o.client())
                ? HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(5)).build()
                : null;

        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(o.warmupSeconds());
        long end = measureFrom + TimeUnit.SECONDS.toNanos(o.durationSeconds());
        CountDownLatch done = new CountDownLatch(o.connections());
        ExecutorService pool = Executors.newFixedThreadPool(o.connections());
        AtomicInteger exhausted = new AtomicInteger();
        for (int c = 0; c < o.connections(); c++) {
            WorkerStats s = stats[c];
            pool.execute(() -> {
                try {
                    if (jdk != null) {
                        runJdk(o, jdk, signed, next, s, measureFrom, end, exhausted);
                    } else {
                        runRaw(o, signed, next, s, measureFrom, end, exhausted);
                    }
                } finally {
                    done.countDown();
                }
            });
        }
        // machine CPU over the measured window (all processes), and the generator's own share
        long[] cpuAtStart = null;
        long ownAtStart = 0;
        long sleepTo = measureFrom - System.nanoTime();
        if (sleepTo > 0) {
            TimeUnit.NANOSECONDS.sleep(sleepTo);
        }
        cpuAtStart = procStat();
        ownAtStart = ownCpuNanos();
        done.await();
        long[] cpuAtEnd = procStat();
        long ownCpu = ownCpuNanos() - ownAtStart;
        pool.shutdown();
        double seconds = o.durationSeconds();

        long requests = 0, ok = 0, errors = 0;
        Map<Integer, Long> non2xx = new TreeMap<>();
        List<String> acked = new ArrayList<>();
        int latTotal = 0;
        String firstError = null;
        for (WorkerStats s : stats) {
            requests += s.measuredRequests;
            ok += s.measured2xx;
            errors += s.errors;
            s.non2xx.forEach((k, v) -> non2xx.merge(k, v, Long::sum));
            acked.addAll(s.ackedKeys);
            latTotal += s.latCount;
            if (firstError == null) {
                firstError = s.firstError;
            }
        }
        long[] lat = new long[latTotal];
        int p = 0;
        for (WorkerStats s : stats) {
            System.arraycopy(s.latMicros, 0, lat, p, s.latCount);
            p += s.latCount;
        }
        Arrays.sort(lat);
        long non2xxTotal = non2xx.values().stream().mapToLong(Long::longValue).sum();

        long missing = -1;
        if (o.jdbcUrl() != null) {
            missing = countMissing(o, acked);
        }
        double tput = ok / seconds;
        String cpu = "";
        if (cpuAtStart != null && cpuAtEnd != null) {
            double total = cpuAtEnd[0] - cpuAtStart[0];
            double idle = cpuAtEnd[1] - cpuAtStart[1];
            int cores = Runtime.getRuntime().availableProcessors();
            cpu = String.format(Locale.ROOT, "[%s] machine CPU busy %.0f%% of %d cores over the measured window; "
                            + "generator used %.2f core-s (%.0f%% of one core), %.1f us per request%n",
                    o.label(), total > 0 ? 100.0 * (total - idle) / total : 0, cores, ownCpu / 1e9,
                    100.0 * ownCpu / 1e9 / seconds, requests > 0 ? ownCpu / 1e3 / requests : 0);
        }
        System.out.printf(Locale.ROOT,
                "[%s] connections=%d duration=%ds (+%ds warm-up) client=%s%n"
                        + "[%s] requests=%d 2xx=%d throughput=%.0f 2xx/s%n"
                        + "[%s] latency ms p50=%.2f p90=%.2f p99=%.2f max=%.2f%n"
                        + "[%s] non-2xx=%d %s errors=%d%s%n"
                        + "[%s] acked (incl. warm-up)=%d acked-but-missing=%d%s%n",
                o.label(), o.connections(), o.durationSeconds(), o.warmupSeconds(), o.client(),
                o.label(), requests, ok, tput,
                o.label(), pct(lat, 50), pct(lat, 90), pct(lat, 99), lat.length == 0 ? 0 : lat[lat.length - 1] / 1000.0,
                o.label(), non2xxTotal, non2xx, errors, firstError == null ? "" : " first error: " + firstError,
                o.label(), acked.size(), missing,
                exhausted.get() > 0 ? " (RAN OUT OF PRE-SIGNED DELIVERIES: raise --deliveries)" : "");
        System.out.print(cpu);
        if (o.resultFile() != null) {
            String line = String.join("\t", o.label(), String.valueOf(o.connections()),
                    String.format(Locale.ROOT, "%.0f", tput),
                    String.format(Locale.ROOT, "%.2f", pct(lat, 50)),
                    String.format(Locale.ROOT, "%.2f", pct(lat, 99)),
                    String.valueOf(non2xxTotal), String.valueOf(errors), String.valueOf(missing)) + "\n";
            java.nio.file.Files.writeString(java.nio.file.Path.of(o.resultFile()), line,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        }
        System.exit(missing > 0 ? 2 : 0);
    }

    // ---------------------------------------------------------------------------------------------------------
    // pre-signing

    private static Signed[] presign(Options o) throws Exception {
        long t = Instant.now().getEpochSecond();
        String created = Instant.ofEpochSecond(t).toString();
        String host = o.url().getHost() + ":" + o.url().getPort();
        String path = o.url().getRawPath();
        long ticketBase = 100_000_000L + (System.nanoTime() & 0xffffffL) * 1000L;
        Signed[] out = new Signed[o.deliveries()];
        for (int i = 0; i < out.length; i++) {
            long ticket = ticketBase + i;
            int account = 1 + (i % 1000);
            String body = "{\"event\":\"position.opened\",\"account_id\":" + account
                    + ",\"created_at\":\"" + created + "\""
                    + ",\"data\":{\"ticket\":" + ticket + ",\"symbol\":\"EURUSD\",\"type\":\"buy\""
                    + ",\"volume\":0.10,\"price_open\":1.08450,\"sl\":1.08000,\"tp\":1.09500"
                    + ",\"profit\":0.00,\"swap\":0.00,\"commission\":-0.70"
                    + ",\"time\":\"" + created + "\",\"magic\":20261202"
                    + ",\"comment\":\"metakit-inbox bench\""
                    + ",\"login\":" + (5_000_000 + account) + ",\"server\":\"MetaQuotes-Demo\""
                    + ",\"position_id\":" + ticket + "}}";
            byte[] bodyBytes = body.getBytes(StandardCharsets.UTF_8);
            String v1 = WebhookSender.sign(o.secret(), t, bodyBytes);
            String sig = WebhookSender.signatureHeader(t, List.of(v1));
            String key = t + ":" + v1;
            byte[] raw = null;
            if (!"jdk".equals(o.client())) {
                String head = "POST " + path + " HTTP/1.1\r\n"
                        + "Host: " + host + "\r\n"
                        + "Content-Type: application/json\r\n"
                        + "X-MetaKit-Event: position.opened\r\n"
                        + "X-MetaKit-Signature: " + sig + "\r\n"
                        + "Content-Length: " + bodyBytes.length + "\r\n\r\n";
                byte[] h = head.getBytes(StandardCharsets.US_ASCII);
                raw = Arrays.copyOf(h, h.length + bodyBytes.length);
                System.arraycopy(bodyBytes, 0, raw, h.length, bodyBytes.length);
            }
            out[i] = new Signed(key, sig, bodyBytes, raw);
        }
        System.out.printf(Locale.ROOT, "[%s] body size %d bytes, t=%d%n", o.label(), out[0].body().length, t);
        return out;
    }

    // ---------------------------------------------------------------------------------------------------------
    // clients

    private static void record(WorkerStats s, Signed d, int status, long sentAt, long now, long measureFrom) {
        boolean ok = status >= 200 && status < 300;
        if (ok) {
            s.ackedKeys.add(d.key());
        }
        if (sentAt >= measureFrom) {
            s.measuredRequests++;
            if (ok) {
                s.measured2xx++;
                s.latency((now - sentAt) / 1000);
            } else {
                s.non2xx.merge(status, 1L, Long::sum);
            }
        }
    }

    private static void error(WorkerStats s, Exception e, long sentAt, long measureFrom) {
        if (sentAt >= measureFrom) {
            s.errors++;
            if (s.firstError == null) {
                s.firstError = e.toString();
            }
        }
    }

    /** The next delivery to send, or null once the run's time is up or every delivery is taken (counted). */
    private static Signed take(Signed[] signed, AtomicInteger next, long end, AtomicInteger exhausted) {
        if (System.nanoTime() >= end) {
            return null;
        }
        int i = next.getAndIncrement();
        if (i >= signed.length) {
            exhausted.incrementAndGet();
            return null;
        }
        return signed[i];
    }

    private static void runJdk(Options o, HttpClient client, Signed[] signed, AtomicInteger next, WorkerStats s,
                               long measureFrom, long end, AtomicInteger exhausted) {
        Signed d;
        while ((d = take(signed, next, end, exhausted)) != null) {
            HttpRequest req = HttpRequest.newBuilder(o.url())
                    .timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/json")
                    .header("X-MetaKit-Event", "position.opened")
                    .header("X-MetaKit-Signature", d.signatureHeader())
                    .POST(HttpRequest.BodyPublishers.ofByteArray(d.body()))
                    .build();
            long sentAt = System.nanoTime();
            try {
                HttpResponse<Void> r = client.send(req, HttpResponse.BodyHandlers.discarding());
                record(s, d, r.statusCode(), sentAt, System.nanoTime(), measureFrom);
            } catch (IOException e) {
                error(s, e, sentAt, measureFrom);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void runRaw(Options o, Signed[] signed, AtomicInteger next, WorkerStats s,
                               long measureFrom, long end, AtomicInteger exhausted) {
        Socket socket = null;
        OutputStream out = null;
        InputStream in = null;
        byte[] buf = new byte[8192];
        Signed d;
        while ((d = take(signed, next, end, exhausted)) != null) {
            long sentAt = System.nanoTime();
            try {
                if (socket == null) {
                    socket = new Socket();
                    socket.setTcpNoDelay(true);
                    socket.setSoTimeout(10_000);
                    socket.connect(new InetSocketAddress(o.url().getHost(), o.url().getPort()), 5000);
                    out = socket.getOutputStream();
                    in = new BufferedInputStream(socket.getInputStream(), 8192);
                    sentAt = System.nanoTime();
                }
                out.write(d.rawRequest());
                out.flush();
                LoadResponse r = LoadResponse.read(in, buf);
                record(s, d, r.status(), sentAt, System.nanoTime(), measureFrom);
                if (r.close()) {
                    socket.close();
                    socket = null;
                }
            } catch (IOException e) {
                error(s, e, sentAt, measureFrom);
                try {
                    if (socket != null) {
                        socket.close();
                    }
                } catch (IOException ignored) {
                    // reconnect on the next request
                }
                socket = null;
            }
        }
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // done
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // verification

    private static long countMissing(Options o, List<String> acked) throws Exception {
        long present = 0;
        try (Connection c = DriverManager.getConnection(o.jdbcUrl(), o.dbUser(), o.dbPassword());
             PreparedStatement ps = c.prepareStatement(
                     "select count(*) from metakit.webhook_inbox where delivery_key = any(?::text[])")) {
            int chunk = 20_000;
            for (int from = 0; from < acked.size(); from += chunk) {
                List<String> part = acked.subList(from, Math.min(acked.size(), from + chunk));
                Array arr = c.createArrayOf("text", part.toArray(new String[0]));
                ps.setArray(1, arr);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    present += rs.getLong(1);
                }
                arr.free();
            }
        }
        return acked.size() - present;
    }

    /** {total jiffies, idle+iowait jiffies} from /proc/stat, or null where there is none. */
    private static long[] procStat() {
        try {
            String first = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/stat")).get(0);
            String[] f = first.trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < f.length && i <= 8; i++) {
                total += Long.parseLong(f[i]);
            }
            return new long[] {total, Long.parseLong(f[4]) + Long.parseLong(f[5])};
        } catch (Exception e) {
            return null;
        }
    }

    private static long ownCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            return sun.getProcessCpuTime();
        }
        return 0;
    }

    private static double pct(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int idx = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, idx))] / 1000.0;
    }

    // ---------------------------------------------------------------------------------------------------------
    // options

    private static Options parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || i + 1 >= args.length) {
                usage("bad argument: " + a);
            }
            m.put(a.substring(2), args[++i]);
        }
        String url = m.getOrDefault("url", "http://127.0.0.1:8080/hooks/metakit");
        String secret = m.getOrDefault("secret", System.getenv("METAKIT_WEBHOOK_SECRET"));
        if (secret == null || secret.isEmpty()) {
            usage("--secret (or METAKIT_WEBHOOK_SECRET) is required");
        }
        URI uri = URI.create(url);
        if (!"127.0.0.1".equals(uri.getHost()) && !"localhost".equals(uri.getHost())) {
            usage("the load generator sends to 127.0.0.1 only, not " + uri.getHost());
        }
        String client = m.getOrDefault("client", "raw");
        if (!client.equals("raw") && !client.equals("jdk")) {
            usage("--client is raw or jdk");
        }
        return new Options(uri, secret,
                Integer.parseInt(m.getOrDefault("connections", "16")),
                Integer.parseInt(m.getOrDefault("duration", "15")),
                Integer.parseInt(m.getOrDefault("warmup", "3")),
                Integer.parseInt(m.getOrDefault("deliveries", "300000")),
                client,
                m.get("jdbc-url"), m.getOrDefault("db-user", ""), m.getOrDefault("db-password", ""),
                m.getOrDefault("label", "load"), m.get("result-file"));
    }

    private static void usage(String why) {
        System.err.println("IngestLoad: " + why);
        System.err.println("usage: IngestLoad --url http://127.0.0.1:PORT/hooks/metakit --secret S [--connections C]"
                + " [--duration S] [--warmup S] [--deliveries N] [--client raw|jdk] [--jdbc-url URL --db-user U"
                + " --db-password P] [--label L] [--result-file F]");
        System.exit(64);
    }
}
