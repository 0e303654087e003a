package dev.metakit.inbox.support;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.Phaser;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Client threads that send unique, correctly signed deliveries until stopped, each thread paced to a fixed rate, and
 * record every answer (or transport error) with its delivery key and timing: what the fault tests check the inbox
 * against. Each delivery names one of {@code accounts} accounts (1..n), round robin. With {@link #duplicating} some
 * deliveries are also sent, at the same moment and byte for byte, to other addresses: a retry racing its original.
 * With {@link #retryingAsMetaKit} a delivery not answered 2xx is sent again as MetaKit does (each attempt recorded).
 */
public final class SignedLoad implements AutoCloseable {
    /**
     * One request: its key, the status (-1: no answer, the connection failed), when it ran, where it went and the
     * answer's body (null without an answer).
     */
    public record Sent(String key, long account, int status, long startNanos, long endNanos, URI target,
                       String answer) {
        public boolean acked() {
            return status >= 200 && status < 300;
        }

        public long micros() {
            return TimeUnit.NANOSECONDS.toMicros(endNanos - startNanos);
        }
    }

    private final URI target;
    private final String secret;
    private final int threads;
    private final long intervalNanos;
    private final int accounts;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final AtomicLong sequence = new AtomicLong();
    private final ConcurrentLinkedQueue<Sent> sent = new ConcurrentLinkedQueue<>();
    private final List<Thread> workers = new ArrayList<>();
    private volatile boolean running;
    private int duplicateEvery;
    private List<URI> duplicateTargets = List.of();
    /** MetaKit's waits before its 2nd..5th attempt (docs/metakit-contract.md); empty: no retries */
    private long[] retryDelaysMillis = new long[0];
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "signed-load-retries");
        t.setDaemon(true);
        return t;
    });
    /** attempts scheduled or in flight that {@link #stop} waits for */
    private final Phaser retriesPending = new Phaser(1);

    /**
     * @param perThreadRate requests per second per thread (0: as fast as answers come)
     */
    public SignedLoad(URI target, String secret, int threads, int perThreadRate, int accounts) {
        this.target = target;
        this.secret = secret;
        this.threads = threads;
        this.intervalNanos = perThreadRate <= 0 ? 0 : TimeUnit.SECONDS.toNanos(1) / perThreadRate;
        this.accounts = accounts;
    }

    /**
     * Every {@code every}-th delivery is sent to each of {@code targets} as well, all copies at once (the same body
     * and signature header, so the same delivery key), each copy recorded as its own {@link Sent}.
     */
    public SignedLoad duplicating(int every, List<URI> targets) {
        this.duplicateEvery = every;
        this.duplicateTargets = List.copyOf(targets);
        return this;
    }

    /**
     * Each delivery answered other than 2xx (or not at all) is sent again with the same bytes and signature after 0.5,
     * 1, 2 and 4 s, five attempts at most, as MetaKit retries: a delivery a loaded machine shed (503, retry later) is
     * then acked by a later attempt, which {@link #unacked} tells.
     */
    public SignedLoad retryingAsMetaKit() {
        this.retryDelaysMillis = new long[]{500, 1000, 2000, 4000};
        return this;
    }

    public SignedLoad start() {
        running = true;
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(this::run, "signed-load-" + i);
            t.setDaemon(true);
            t.start();
            workers.add(t);
        }
        return this;
    }

    private void run() {
        long next = System.nanoTime();
        while (running) {
            long n = sequence.incrementAndGet();
            long account = 1 + (n % accounts);
            byte[] body = ("{\"event\":\"position.modified\",\"account_id\":" + account + ",\"data\":{\"ticket\":"
                    + account * 100 + ",\"n\":" + n + "}}").getBytes(StandardCharsets.UTF_8);
            long t = System.currentTimeMillis() / 1000;
            String v1 = TestSignatures.v1(secret, t, body);
            String key = t + ":" + v1;
            List<java.util.concurrent.CompletableFuture<Sent>> copies = new ArrayList<>();
            if (duplicateEvery > 0 && n % duplicateEvery == 0) {
                for (URI copy : duplicateTargets) {
                    long start = System.nanoTime();
                    copies.add(http.sendAsync(request(copy, t, v1, body), HttpResponse.BodyHandlers.ofString())
                            .handle((r, error) -> sent(key, account, copy, start, r)));
                }
            }
            long start = System.nanoTime();
            HttpResponse<String> response;
            try {
                response = http.send(request(target, t, v1, body), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                response = null;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            Sent primary = sent(key, account, target, start, response);
            sent.add(primary);
            if (!primary.acked()) {
                retryLater(request(target, t, v1, body), key, account, 1);
            }
            int status = primary.status();
            copies.forEach(c -> sent.add(c.join()));
            if (intervalNanos > 0) {
                // pacing, not waiting for a condition: the next slot of this thread's fixed rate
                next += intervalNanos;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                } else {
                    next = System.nanoTime();
                }
            } else if (status == -1) {
                // nothing listening (a killed consumer): do not spin on connection refused
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
    }

    private static HttpRequest request(URI to, long t, String v1, byte[] body) {
        return HttpRequest.newBuilder(to).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .header("X-MetaKit-Event", "position.modified")
                .header("X-MetaKit-Signature", "t=" + t + ",v1=" + v1)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    }

    /** MetaKit's next attempt after {@code attempt} failed, if it makes one: recorded, and retried in turn. */
    private void retryLater(HttpRequest request, String key, long account, int attempt) {
        if (attempt > retryDelaysMillis.length) {
            return;
        }
        retriesPending.register();
        retries.schedule(() -> {
            long start = System.nanoTime();
            http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).handle((r, error) -> {
                Sent again = sent(key, account, request.uri(), start, r);
                sent.add(again);
                if (!again.acked()) {
                    retryLater(request, key, account, attempt + 1);
                }
                retriesPending.arriveAndDeregister();
                return again;
            });
        }, retryDelaysMillis[attempt - 1], TimeUnit.MILLISECONDS);
    }

    /** What one copy got: its status and body, or -1 when the connection failed (response null). */
    private static Sent sent(String key, long account, URI to, long start, HttpResponse<String> response) {
        long end = System.nanoTime();
        return response == null ? new Sent(key, account, -1, start, end, to, null)
                : new Sent(key, account, response.statusCode(), start, end, to, response.body());
    }

    /**
     * Stops the threads and waits for their requests in flight to be answered, and for MetaKit's retries of the
     * deliveries not acked yet to be made (at most 7.5 s of waits and five 10 s requests).
     */
    public List<Sent> stop() throws InterruptedException {
        running = false;
        for (Thread t : workers) {
            t.join(TimeUnit.SECONDS.toMillis(15));
        }
        workers.clear();
        try {
            retriesPending.awaitAdvanceInterruptibly(retriesPending.arrive(), 60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("MetaKit's retries of the deliveries not acked still running after 60 s");
        }
        retries.shutdown();
        return results();
    }

    public List<Sent> results() {
        return List.copyOf(sent);
    }

    public long count(Predicate<Sent> which) {
        return sent.stream().filter(which).count();
    }

    public static Set<String> ackedKeys(List<Sent> sent) {
        return sent.stream().filter(Sent::acked).map(Sent::key).collect(Collectors.toSet());
    }

    /** The deliveries none of whose attempts was acked: what MetaKit would have given up on. */
    public static Set<String> unacked(List<Sent> sent) {
        Set<String> acked = ackedKeys(sent);
        return sent.stream().map(Sent::key).filter(k -> !acked.contains(k)).collect(Collectors.toSet());
    }

    /**
     * Every delivery acked within MetaKit's retries, and every attempt refused a 503 that the inbox counted as shed
     * ({@code shed}: its shed count's growth over the load): a loaded machine's refusals, and no other.
     */
    public static void assertAckedWithinMetaKitsRetries(List<Sent> sent, double shed) {
        assertThat(unacked(sent)).as("deliveries no attempt of which was acked").isEmpty();
        assertThat(sent).filteredOn(s -> !s.acked()).allSatisfy(s -> assertThat(s.status()).isEqualTo(503));
        assertThat(shed).as("attempts refused: only those a loaded machine shed")
                .isEqualTo(sent.stream().filter(s -> !s.acked()).count());
    }

    /**
     * A 503: the answer a loaded machine's shedding gives (and MetaKit retries); {@code RunningInbox.shedCount} tells
     * whether the inbox shed it or refused it for another reason.
     */
    public static boolean retryLater(Sent s) {
        return s.status() == 503;
    }

    public static Map<Integer, Long> byStatus(List<Sent> sent) {
        return sent.stream().collect(Collectors.groupingBy(Sent::status, java.util.TreeMap::new,
                Collectors.counting()));
    }

    /** The p-th percentile (0..100) of the latencies, in microseconds; 0 when there are none. */
    public static long percentileMicros(List<Sent> sent, double p) {
        long[] micros = sent.stream().mapToLong(Sent::micros).sorted().toArray();
        if (micros.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(p / 100.0 * micros.length) - 1;
        return micros[Math.max(0, Math.min(micros.length - 1, index))];
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
