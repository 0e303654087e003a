package dev.metakit.inbox.sandbox;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Delivers events the way MetaKit does. Per event the body is serialised once and {@code t} stamped once, so every
 * attempt (and any duplicate) is byte-identical; each delivery runs its own retry schedule, so order is lost; after
 * the last failed attempt the event is gone and the endpoint's {@code lastDeliveryStatus} is {@code failed}.
 */
public final class WebhookSender implements AutoCloseable {
    public static final String SIGNATURE_HEADER = "X-MetaKit-Signature";
    public static final String EVENT_HEADER = "X-MetaKit-Event";
    private static final Logger LOG = LoggerFactory.getLogger(WebhookSender.class);

    private final WebhookEndpoints endpoints;
    private final DeliverySchedule schedule;
    private final SandboxFaults faults;
    private final Clock clock;
    private final Random random;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService httpExecutor;
    private final HttpClient client;
    private final DeliveryLog log = new DeliveryLog();
    private final Object idle = new Object();
    private int openCopies;
    private long events;

    public WebhookSender(WebhookEndpoints endpoints, DeliverySchedule schedule, SandboxFaults faults, long seed,
                         Clock clock) {
        this.endpoints = endpoints;
        this.schedule = schedule;
        this.faults = faults;
        this.clock = clock;
        this.random = new Random(seed ^ 0xDE11FE12L);
        this.scheduler = Executors.newScheduledThreadPool(2, daemon("metakit-sandbox-sender-schedule"));
        this.httpExecutor = Executors.newFixedThreadPool(16, daemon("metakit-sandbox-sender-http"));
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(schedule.requestTimeout())
                .executor(httpExecutor)
                .build();
    }

    /**
     * Signs the event for every endpoint and schedules its delivery (or drops it, or doubles it, as the faults say).
     * Fault choices are drawn here, in call order, so one seed and one event order replay the same faults.
     */
    public void send(SandboxEvent event) {
        byte[] body = event.toBytes();
        long t = clock.instant().getEpochSecond();
        List<Delivery> scheduled = new ArrayList<>();
        List<long[]> delays = new ArrayList<>();
        synchronized (random) {
            events++;
            if (faults.rotateAfterEvents() > 0 && events == faults.rotateAfterEvents() + 1) {
                endpoints.all().forEach(endpoint -> {
                    SecretRotation rotation = endpoints.rotate(endpoint.id());
                    LOG.info("Sandbox rotated the secret of {} (previous signed until {})", rotation.webhookId(),
                            rotation.previousSignedUntil());
                });
            }
            for (WebhookEndpoint endpoint : endpoints.all()) {
                List<String> v1s = endpoint.signingSecrets().stream().map(secret -> sign(secret, t, body)).toList();
                boolean lost = random.nextDouble() < faults.lostProbability();
                boolean duplicated = !lost && random.nextDouble() < faults.duplicateProbability();
                long first = jitterMillis();
                long second = duplicated ? jitterMillis() + random.nextInt(500) : -1;
                Delivery delivery = new Delivery(event, endpoint, t, v1s, body, lost, duplicated);
                log.add(delivery);
                if (!lost) {
                    scheduled.add(delivery);
                    delays.add(new long[]{first, second});
                }
            }
        }
        for (int i = 0; i < scheduled.size(); i++) {
            Delivery delivery = scheduled.get(i);
            startCopy(delivery, 0, delays.get(i)[0]);
            if (delivery.duplicated()) {
                startCopy(delivery, 1, delays.get(i)[1]);
            }
        }
    }

    /** Sends one event and waits (up to the timeout) for its schedule to end; returns its delivery to the first endpoint. */
    public Delivery sendAndWait(SandboxEvent event, Duration timeout) throws InterruptedException {
        int before = log.deliveries().size();
        send(event);
        awaitIdle(timeout);
        return log.deliveries().get(before);
    }

    public DeliveryLog log() {
        return log;
    }

    public long events() {
        synchronized (random) {
            return events;
        }
    }

    /** Delivery schedules still running (a duplicated delivery counts twice until both copies end). */
    public int inFlight() {
        synchronized (idle) {
            return openCopies;
        }
    }

    /** Waits until no delivery is in flight; false if that did not happen within the timeout. */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (idle) {
            while (openCopies > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(idle, left);
            }
            return true;
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        httpExecutor.shutdownNow();
        synchronized (idle) {
            openCopies = 0;
            idle.notifyAll();
        }
    }

    private void startCopy(Delivery delivery, int copy, long delayMillis) {
        synchronized (idle) {
            openCopies++;
        }
        try {
            scheduler.schedule(() -> attempt(delivery, copy, 1), delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            copyEnded(delivery, false, false);
        }
    }

    private void attempt(Delivery delivery, int copy, int attempt) {
        HttpRequest request = HttpRequest.newBuilder(delivery.endpoint().url())
                .timeout(schedule.requestTimeout())
                .header("Content-Type", "application/json")
                .header(EVENT_HEADER, delivery.event().event())
                .header(SIGNATURE_HEADER, delivery.signatureHeader())
                .POST(HttpRequest.BodyPublishers.ofByteArray(delivery.bodyBytes()))
                .build();
        var startedAt = clock.instant();
        long startedNanos = System.nanoTime();
        try {
            client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, error) -> {
                int status = response == null ? 0 : response.statusCode();
                String reason = error == null ? null : describe(error);
                DeliveryAttempt record = new DeliveryAttempt(delivery.key(), copy, attempt, startedAt, startedNanos,
                        status, reason);
                delivery.record(record);
                afterAttempt(delivery, copy, attempt, record);
            });
        } catch (RuntimeException e) {
            DeliveryAttempt record = new DeliveryAttempt(delivery.key(), copy, attempt, startedAt, startedNanos, 0,
                    describe(e));
            delivery.record(record);
            afterAttempt(delivery, copy, attempt, record);
        }
    }

    private void afterAttempt(Delivery delivery, int copy, int attempt, DeliveryAttempt record) {
        if (record.succeeded()) {
            copyEnded(delivery, true, true);
            return;
        }
        if (attempt >= schedule.maxAttempts()) {
            LOG.debug("Sandbox gave up on {} to {} after {} attempts", delivery.event().event(),
                    delivery.endpointId(), attempt);
            copyEnded(delivery, false, true);
            return;
        }
        Duration delay = schedule.delays().get(attempt - 1);
        try {
            scheduler.schedule(() -> attempt(delivery, copy, attempt + 1), delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException stopped) {
            copyEnded(delivery, false, false);
        }
    }

    private void copyEnded(Delivery delivery, boolean succeeded, boolean recordOnEndpoint) {
        if (recordOnEndpoint) {
            delivery.endpoint().recordDelivery(succeeded);
        }
        delivery.copyEnded(succeeded);
        synchronized (idle) {
            if (openCopies > 0) {
                openCopies--;
            }
            idle.notifyAll();
        }
    }

    private long jitterMillis() {
        long max = faults.maxFirstAttemptDelay().toMillis();
        return max <= 0 ? 0 : (long) (random.nextDouble() * max);
    }

    /** {@code t=<t>,v1=<hex>[,v1=<hex>...]}: one v1 per signing secret, as MetaKit sends during a rotation. */
    public static String signatureHeader(long t, List<String> v1s) {
        StringBuilder header = new StringBuilder("t=").append(t);
        v1s.forEach(v1 -> header.append(",v1=").append(v1));
        return header.toString();
    }

    /** hex(HMAC-SHA256(secret, "&lt;t&gt;." + body)) */
    public static String sign(String secret, long t, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((t + ".").getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(mac.doFinal(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    private static String describe(Throwable error) {
        Throwable cause = error;
        while (cause.getCause() != null && cause instanceof java.util.concurrent.CompletionException) {
            cause = cause.getCause();
        }
        return cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
    }

    static ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + n.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
