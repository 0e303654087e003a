package dev.metakit.inbox;

import dev.metakit.inbox.config.EnvironmentNames;
import dev.metakit.inbox.feed.ChangePublisher;
import dev.metakit.inbox.feed.FeedOrderCheck;
import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.ingest.WebhookVerification;
import dev.metakit.inbox.reconcile.AccountReconciler;
import dev.metakit.inbox.sandbox.Convergence;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.sandbox.SandboxTruth;
import dev.metakit.inbox.sandbox.SecretRotation;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.MainListenerSupport;
import org.apache.camel.support.service.ServiceHelper;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;

import javax.sql.DataSource;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * The default run's sandbox mode: the MetaKit sandbox runs in this process and the consumer is wired to it.
 * {@link RunMode} decides whether it runs (dev mode asked for, and none of the user's own settings configured) and
 * calls {@link #prepare} before camel-main creates the YAML beans, so that the sandbox's URL, key and secret, and its
 * own database, are override properties when those beans are created; once the bundle is up the traffic starts and
 * a progress line follows every few seconds. Otherwise none of this exists.
 */
final class SandboxRun extends MainListenerSupport {
    static final int ACCOUNTS = 3;
    static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);
    /** A ticket the market touched this recently is in flight: its deliveries and reconcile may still be running. */
    static final Duration SETTLE = Duration.ofSeconds(10);

    private final Sandbox sandbox;
    private final SandboxDatabase database;
    private final Map<String, String> overrides;
    private final Map<Long, Long> touched = new ConcurrentHashMap<>();
    private final FeedOrderCheck feed = new FeedOrderCheck();
    private ScheduledExecutorService progress;
    private CamelContext context;

    private SandboxRun(Sandbox sandbox, SandboxDatabase database, Map<String, String> overrides) {
        this.sandbox = sandbox;
        this.database = database;
        this.overrides = overrides;
    }

    /**
     * Builds the sandbox (its API bound, no traffic yet) and recreates the sandbox's own database directory.
     *
     * @param resolve the effective value of a property key
     * @param env     the process environment, for the sandbox's own knobs
     */
    static SandboxRun prepare(Function<String, Optional<String>> resolve, Function<String, String> env,
                              SandboxDatabase database) throws IOException {
        int consumerPort = Integer.parseInt(resolve.apply("camel.server.port").map(String::trim).orElse("8080"));
        String path = resolve.apply("metakit.webhook.path").map(String::trim).orElseThrow();
        String secret = generatedSecret();
        SandboxSettings settings = SandboxSettings.builder()
                .webhookUrl("http://127.0.0.1:" + consumerPort + path)
                .webhookSecret(secret)
                .seed(Long.parseLong(or(env.apply("METAKIT_SANDBOX_SEED"), "42")))
                .accounts(ACCOUNTS)
                .operationsPerSecond(Double.parseDouble(or(env.apply("METAKIT_SANDBOX_RATE"), "3")))
                .faults(SandboxFaults.moderate())
                .apiPort(0)
                .build();
        // the sandbox world is new every run: its mirror lives in its own database, recreated empty
        database.recreate();
        Sandbox sandbox = new Sandbox(settings);

        Map<String, String> overrides = new LinkedHashMap<>();
        overrides.put("camel.server.port", String.valueOf(consumerPort));
        overrides.put("metakit.api.url", sandbox.apiBaseUrl().toString());
        overrides.put("metakit.api.key", sandbox.apiKey());
        overrides.put("metakit.webhook.secret", secret);
        overrides.put("metakit.webhook.secret-previous", "");
        overrides.put("metakit.accounts", LongStream.rangeClosed(1, ACCOUNTS).mapToObj(Long::toString)
                .collect(Collectors.joining(",")));
        // lost deliveries are repaired by the periodic reconcile: make that quick enough to watch
        overrides.put("metakit.reconcile.interval",
                EnvironmentNames.read("metakit.reconcile.interval", env).orElse("PT20S"));
        overrides.put("metakit.status.interval", EnvironmentNames.read("metakit.status.interval", env).orElse("PT10S"));
        overrides.put("metakit.database.url", "");
        overrides.put("metakit.database.user", "");
        overrides.put("metakit.database.password", "");
        overrides.put("metakit.database.embedded-dir", database.setting());
        return new SandboxRun(sandbox, database, overrides);
    }

    /** What the consumer must be configured with, applied by RunMode before camel-main creates any bean. */
    Map<String, String> overrides() {
        return overrides;
    }

    @Override
    public void beforeStart(BaseMainSupport main) {
        context = main.getCamelContext();
        // a host may bind its own inboxDataSource: the sandbox's fake world never goes into anything but its own. The
        // database starts with the context, before anything that uses it; here it starts first, to be checked first
        DataSource inboxDataSource = bean("inboxDataSource", DataSource.class);
        ServiceHelper.startService(inboxDataSource);
        database.verify(inboxDataSource);
        // every reconcile and retry is logged at INFO: in the sandbox the progress line says it in one place
        Configurator.setLevel("dev.metakit.inbox.reconcile", Level.WARN);
        Configurator.setLevel("dev.metakit.inbox.worker", Level.WARN);
        // the HTTP client's own re-execution of injected 429/503 answers
        Configurator.setLevel("org.apache.hc.client5.http.impl.classic", Level.WARN);
    }

    @Override
    public void afterStart(BaseMainSupport main) {
        context = main.getCamelContext();
        WebhookVerification verification = bean("webhookVerification", WebhookVerification.class);
        progress = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metakit-sandbox-progress");
            t.setDaemon(true);
            return t;
        });
        sandbox.onRotation(rotation -> rotated(verification, rotation));
        bean("changePublisher", ChangePublisher.class).onSent(feed);
        sandbox.market().onEvent(event -> {
            if (event.data().get("ticket") instanceof Number ticket) {
                touched.put(ticket.longValue(), System.nanoTime());
            }
        });
        String url = "http://localhost:" + context.resolvePropertyPlaceholders("{{camel.server.port}}")
                + context.resolvePropertyPlaceholders("{{metakit.webhook.path}}");
        System.out.println(banner(url, sandbox.apiBaseUrl().toString(), sandbox.settings().operationsPerSecond()));
        System.out.println(" Webhook secret: " + verification.currentSecret() + "\n Send your own signed test delivery"
                + " (paste into a shell; a tampered copy gets 400):" + DevRunBanner.sendCommand(verification.currentSecret(), url));
        sandbox.start();
        progress.scheduleWithFixedDelay(this::printProgress, PROGRESS_EVERY.toMillis(), PROGRESS_EVERY.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /**
     * The simulated market and its deliveries stop before the consumer does; its REST API stays up until the context
     * has stopped, because the worker, the reconcile and the status watch may be mid-call to it until then (a call
     * refused by a closed API would read as an outage).
     */
    @Override
    public void beforeStop(BaseMainSupport main) {
        if (progress != null) {
            progress.shutdownNow();
        }
        sandbox.stopTraffic();
        sandbox.sender().close();
    }

    @Override
    public void afterStop(BaseMainSupport main) {
        sandbox.close();
    }

    /** The consumer accepts the new and the previous secret; the previous one is dropped after its window. */
    private void rotated(WebhookVerification verification, SecretRotation rotation) {
        verification.secrets(rotation.secret(), rotation.previousSecret());
        System.out.println("sandbox: webhook secret rotated; the consumer now accepts the new and the previous one");
        // retries of deliveries signed before the rotation carry the old v1 for up to ~32 s more
        long dropAfter = Duration.between(Instant.now(), rotation.previousSignedUntil()).toMillis() + 60_000;
        String current = rotation.secret();
        progress.schedule(() -> {
            if (current.equals(verification.currentSecret())) {
                verification.secrets(current, null);
            }
        }, Math.max(0, dropAfter), TimeUnit.MILLISECONDS);
    }

    private void printProgress() {
        try {
            System.out.println(progressLine());
        } catch (RuntimeException e) {
            System.out.println("sandbox: progress unavailable: " + e.getMessage());
        }
    }

    String progressLine() {
        long now = System.nanoTime();
        touched.values().removeIf(at -> now - at > SETTLE.toNanos());
        SandboxTruth truth = sandbox.truth();
        DataSource db = bean("inboxDataSource", DataSource.class);
        String converged;
        try {
            // a live view: a ticket touched while the table is read is left out too
            Convergence.Report report = Convergence.check(truth, db, touched.keySet());
            converged = report.summary() + " (" + report.compared() + " positions compared, " + report.skipped()
                    + " in flight)";
        } catch (Exception e) {
            converged = "converged: unknown (" + e.getMessage() + ")";
        }
        long stored = counter("metakit.webhook.stored");
        long duplicates = counter("metakit.webhook.duplicates");
        long rejected = counter("metakit.webhook.rejected");
        AccountReconciler reconciler = bean("accountReconciler", AccountReconciler.class);
        return String.format(java.util.Locale.ROOT,
                "sandbox: %d trades | deliveries received %d, %d duplicates, %d rejected | inbox backlog %s"
                        + " | reconciles %d | API calls %d | %s | %s",
                truth.operations(), stored + duplicates, duplicates, rejected, backlog(db), reconciler.reconciles(),
                sandbox.apiCalls().total(), converged, feed.summary());
    }

    private static String backlog(DataSource db) {
        try {
            return String.valueOf(new InboxAdmin(db).backlog().pending());
        } catch (Exception e) {
            return "?";
        }
    }

    private long counter(String name) {
        Set<MeterRegistry> registries = context.getRegistry().findByType(MeterRegistry.class);
        double total = 0;
        for (MeterRegistry registry : registries) {
            for (Counter c : registry.find(name).counters()) {
                total += c.count();
            }
        }
        return Math.round(total);
    }

    private <T> T bean(String name, Class<T> type) {
        T bean = context.getRegistry().lookupByNameAndType(name, type);
        if (bean == null) {
            throw new IllegalStateException("sandbox mode needs the bean " + name);
        }
        return bean;
    }

    static String banner(String url, String apiUrl, double rate) {
        return """

                ==================================================================================================
                 metakit-inbox SANDBOX MODE: a simulated MetaKit runs in this process (not for production)
                 Consumer endpoint : %1$s  (signed deliveries from the sandbox)
                 Sandbox REST API  : %2$s  (the consumer reconciles against it)
                 Traffic           : %3$s accounts, %4$s trades/s, moderate faults (delays, duplicates, lost
                                     deliveries, API 5xx/429, slow answers)
                 Every %5$d s one progress line; "converged: yes" means the positions table matches the sandbox.
                 Leave sandbox mode: configure METAKIT_API_URL, METAKIT_API_KEY, METAKIT_WEBHOOK_SECRET or DATABASE_URL
                ==================================================================================================
                """.formatted(url, apiUrl, ACCOUNTS, rate, PROGRESS_EVERY.toSeconds());
    }

    private static String generatedSecret() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return "whsec_sandbox_" + HexFormat.of().formatHex(bytes);
    }

    private static String or(String value, String fallback) {
        return blank(value) ? fallback : value.trim();
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
