package dev.metakit.inbox.sandbox;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The whole MetaKit side in one object: the trading model, its REST API, the webhook sender, and a traffic
 * generator that trades at a steady rate. Construct it (API bound, nothing generated yet), wire the consumer to
 * {@link #apiBaseUrl()}, {@link #apiKey()} and {@link #currentSecret()}, then {@link #start()} the traffic.
 */
public final class Sandbox implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Sandbox.class);

    private final SandboxSettings settings;
    private final SandboxMarket market;
    private final WebhookEndpoints webhooks;
    private final WebhookEndpoint webhook;
    private final WebhookSender sender;
    private final SandboxApi api;
    private final AtomicLong generated = new AtomicLong();
    private final long startedNanos = System.nanoTime();
    private ScheduledExecutorService traffic;

    public Sandbox(SandboxSettings settings) throws IOException {
        this.settings = settings;
        this.market = new SandboxMarket(settings.seed(), settings.accounts(), settings.clock());
        this.webhooks = new WebhookEndpoints(settings.seed(), settings.clock(), settings.faults().rotationWindow());
        this.webhook = webhooks.add(settings.webhookUrl(), settings.webhookSecret());
        this.sender = new WebhookSender(webhooks, settings.deliverySchedule(), settings.faults(), settings.seed(),
                settings.clock());
        market.onEvent(sender::send);
        try {
            this.api = new SandboxApi(market, webhooks, settings.apiKey(), settings.faults(), settings.seed(),
                    settings.apiPort(), settings.apiThreads());
        } catch (IOException | RuntimeException e) {
            sender.close();
            throw e;
        }
    }

    /** Builds the sandbox and starts its traffic generator. */
    public static Sandbox start(SandboxSettings settings) throws IOException {
        Sandbox sandbox = new Sandbox(settings);
        sandbox.start();
        return sandbox;
    }

    /** Starts the traffic generator at the configured rate; no-op if the rate is 0 or it already runs. */
    public synchronized void start() {
        if (traffic != null || settings.operationsPerSecond() <= 0) {
            return;
        }
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
                WebhookSender.daemon("metakit-sandbox-traffic"));
        long periodNanos = Math.max(1, Math.round(1e9 / settings.operationsPerSecond()));
        executor.scheduleAtFixedRate(this::generateOne, 0, periodNanos, TimeUnit.NANOSECONDS);
        traffic = executor;
        LOG.info("Sandbox trading on {} accounts at {}/s (seed {})", settings.accounts(),
                settings.operationsPerSecond(), settings.seed());
    }

    /** Stops the traffic generator; deliveries already scheduled carry on. */
    public synchronized void stopTraffic() {
        if (traffic != null) {
            traffic.shutdownNow();
            traffic = null;
        }
    }

    public synchronized boolean trafficRunning() {
        return traffic != null && !traffic.isShutdown();
    }

    /** Performs {@code n} random operations now, on the calling thread (their deliveries are scheduled as usual). */
    public void runOperations(int n) {
        for (int i = 0; i < n; i++) {
            market.randomOperation();
        }
    }

    /** Whether a bounded generator ({@code operations > 0}) has done all its operations. */
    public boolean trafficDone() {
        return settings.operations() > 0 && generated.get() >= settings.operations();
    }

    /** Waits until no delivery is in flight (attempting or waiting for a retry); false on timeout. */
    public boolean awaitDeliveriesSettled(Duration timeout) throws InterruptedException {
        return sender.awaitIdle(timeout);
    }

    /** Stops the traffic and waits for the sender to settle: after this the truth no longer moves. */
    public boolean quiesce(Duration timeout) throws InterruptedException {
        stopTraffic();
        return awaitDeliveriesSettled(timeout);
    }

    public SandboxTruth truth() {
        return market.truth();
    }

    public DeliveryLog deliveries() {
        return sender.log();
    }

    public ApiCallStats apiCalls() {
        return api.stats();
    }

    public int apiPort() {
        return api.port();
    }

    public URI apiBaseUrl() {
        return api.baseUrl();
    }

    public String apiKey() {
        return settings.apiKey();
    }

    /** The secret deliveries are signed with now (changes on a rotation). */
    public String currentSecret() {
        return webhook.currentSecret();
    }

    /** The secret before the last rotation, or null. */
    public String previousSecret() {
        return webhook.previousSecret();
    }

    /** The consumer's endpoint, {@code wh_1}: its secrets and {@code lastDeliveryStatus}. */
    public WebhookEndpoint webhook() {
        return webhook;
    }

    public WebhookEndpoints webhooks() {
        return webhooks;
    }

    /** Told of every rotation (the rotation fault, or an operator's {@code POST /v1/webhooks/{id}/rotate}). */
    public void onRotation(Consumer<SecretRotation> listener) {
        webhooks.onRotation(listener);
    }

    /** Rotates {@code wh_1}'s secret now, as {@code POST /v1/webhooks/wh_1/rotate} would. */
    public SecretRotation rotateSecret() {
        return webhooks.rotate(webhook.id());
    }

    public SandboxMarket market() {
        return market;
    }

    public SandboxApi api() {
        return api;
    }

    public WebhookSender sender() {
        return sender;
    }

    public SandboxSettings settings() {
        return settings;
    }

    /** One line for the progress log: operations, deliveries by outcome, attempts, API calls. */
    public String progressLine() {
        DeliveryLog.Stats d = sender.log().stats();
        long ops = market.operations();
        double seconds = Math.max(0.001, (System.nanoTime() - startedNanos) / 1e9);
        return String.format(java.util.Locale.ROOT,
                "sandbox: %d operations (%.1f/s), deliveries %d: %d ok, %d given up, %d lost, %d duplicated, "
                        + "%d in flight; attempts %d (%d failed); api calls %d (%d errors); %s %s",
                ops, ops / seconds, d.deliveries(), d.succeeded(), d.givenUp(), d.lost(), d.duplicated(),
                sender.inFlight(), d.attempts(), d.failedAttempts(), api.stats().total(), api.stats().errors(),
                webhook.id(), webhook.lastDeliveryStatus() == null ? "-" : webhook.lastDeliveryStatus());
    }

    @Override
    public void close() {
        stopTraffic();
        api.close();
        sender.close();
    }

    private void generateOne() {
        if (settings.operations() > 0 && generated.get() >= settings.operations()) {
            stopTrafficAsync();
            return;
        }
        try {
            market.randomOperation();
            generated.incrementAndGet();
        } catch (RuntimeException e) {
            LOG.warn("Sandbox traffic operation failed", e);
        }
    }

    private void stopTrafficAsync() {
        ScheduledExecutorService executor;
        synchronized (this) {
            executor = traffic;
        }
        if (executor != null) {
            executor.shutdown();
        }
    }
}
