package dev.metakit.inbox.secret;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.DurationSetting;
import dev.metakit.inbox.config.InstanceId;
import dev.metakit.inbox.config.RootCause;
import dev.metakit.inbox.config.SecretSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The bean {@code webhookSecrets}: where the webhook secret comes from, and its rotation on this instance.
 * <ul>
 * <li>METAKIT_WEBHOOK_SECRET set: that secret (and METAKIT_WEBHOOK_SECRET_PREVIOUS) wins; a stored one is ignored and
 * a rotation is refused, as it could not reach this instance.</li>
 * <li>Otherwise, with METAKIT_WEBHOOK_SECRET_KEY: the stored secret, installed before the routes start; then a poll
 * every {@link #POLL} picks up a rotation any instance stored, drops the previous secret once its window ended, and
 * keeps storing a rotation whose first store failed. The database down leaves the secrets in force as they are.</li>
 * </ul>
 * {@link #rotate(String)} is the one operator action (the ops page and API); {@link #rotateIfDue()} the schedule.
 */
public class WebhookSecrets extends ContextBean {
    private static final Logger LOG = LoggerFactory.getLogger(WebhookSecrets.class);
    /** How soon every instance accepts a secret another one stored. */
    static final Duration POLL = Duration.ofSeconds(1);

    private SecretsInForce verification;
    private DataSource dataSource;
    private String secretKey;
    private String webhookId;
    private String apiUrl;
    private String apiKey;
    private long connectTimeoutMillis = 3000;
    private long readTimeoutMillis = 15000;
    private String rotateEvery;
    private String instanceId;
    private Clock clock = Clock.systemUTC();

    private SecretCipher cipher;
    private Duration rotateEveryDuration;
    private WebhookSecretStore store;
    private SecretRotator rotator;
    private ScheduledExecutorService poll;
    private final Object lock = new Object();
    private AcceptedSecrets held;
    private boolean previousInForce;
    private volatile SecretRotator.Unsaved unsaved;
    private volatile String unreadable;
    private volatile String staleClaim;
    private volatile boolean databaseFailing;
    private long ticks;

    @Override
    protected void checkSettings() {
        secretKey = SecretSettings.read(getCamelContext(), SecretSettings.WEBHOOK_SECRET_KEY, secretKey);
        apiKey = SecretSettings.read(getCamelContext(), SecretSettings.API_KEY, apiKey);
        cipher = secretKey == null || secretKey.isBlank() ? null : SecretCipher.fromSetting(secretKey);
        rotateEveryDuration = rotateEvery == null || rotateEvery.isBlank() ? null
                : DurationSetting.parse("metakit.webhook.rotate-every", rotateEvery);
        if (rotateEveryDuration != null && verification.configuredSecret()) {
            throw new ConfigurationException("METAKIT_WEBHOOK_ROTATE_EVERY rotates the stored secret, but"
                    + " METAKIT_WEBHOOK_SECRET is set and wins over it: unset one of them (docs/operations.md"
                    + " \"Rotating the webhook secret\")");
        }
        if (rotateEveryDuration != null && cipher == null) {
            throw new ConfigurationException("METAKIT_WEBHOOK_ROTATE_EVERY needs METAKIT_WEBHOOK_SECRET_KEY, the key"
                    + " the rotated secret is stored under");
        }
    }

    @Override
    protected void begin() throws Exception {
        store = new WebhookSecretStore(dataSource);
        String instance = InstanceId.of(instanceId) + "/"
                + UUID.randomUUID().toString().substring(0, 8);
        if (cipher != null) {
            rotator = new SecretRotator(store, cipher, new MetaKitRotationClient(apiUrl, apiKey,
                    Duration.ofMillis(connectTimeoutMillis), Duration.ofMillis(readTimeoutMillis)), webhookId,
                    Duration.ofSeconds(verification.getToleranceSeconds()), instance, clock);
        }
        if (verification.configuredSecret() || cipher == null) {
            return; // the environment's secret, or the dev run's generated one: nothing stored to follow
        }
        Optional<WebhookSecretStore.Sealed> row = store.read();
        if (row.isPresent()) {
            install(SecretRotator.open(row.get(), cipher)); // a wrong key stops startup here, naming the setting
        } else if (verification.isDevMode()) {
            verification.generateSecret();
        } else {
            throw new ConfigurationException("METAKIT_WEBHOOK_SECRET is unset and the database holds no stored webhook"
                    + " secret: set METAKIT_WEBHOOK_SECRET, or store it once with InboxCommand store-secret"
                    + " (docs/operations.md \"Rotating the webhook secret\")");
        }
        poll = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metakit-webhook-secrets");
            t.setDaemon(true);
            return t;
        });
        poll.scheduleWithFixedDelay(this::tick, POLL.toMillis(), POLL.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    protected void end() {
        if (poll != null) {
            poll.shutdownNow();
            poll = null;
        }
    }

    /** One poll: store what is unsaved, else load a newer generation; close the previous secret's window. */
    void tick() {
        try {
            SecretRotator.Unsaved pending = unsaved;
            boolean saved = false;
            if (pending != null) {
                rotator.retrySave(pending);
                unsaved = null;
                saved = true;
            }
            if (pending == null || saved) {
                WebhookSecretStore.Sealed row = store.read().orElse(null);
                // after a late save, the row may be another instance's rotation of the same generation (it took a
                // stale claim over): what is stored is what every instance must hold
                if (row != null && (row.generation() > heldGeneration()
                        || saved && row.generation() == heldGeneration())) {
                    AcceptedSecrets loaded = SecretRotator.open(row, cipher);
                    install(loaded);
                    LOG.info("Webhook secret generation {} in force (stored by a rotation); the previous secret is"
                            + " accepted until {}", loaded.generation(), loaded.previousUntil());
                }
            }
            if (ticks++ % 5 == 0) {
                checkClaim();
            }
            if (databaseFailing) {
                LOG.info("Webhook secrets: the database answers again");
            }
            databaseFailing = false;
            if (unreadable != null) {
                LOG.info("Webhook secrets: the stored secret is readable again");
            }
            unreadable = null;
        } catch (SQLException e) {
            if (!databaseFailing || unsaved != null && ticks % 30 == 0) {
                LOG.warn("Webhook secrets: cannot read the database ({}); the secrets in force stay as they are{}",
                        RootCause.message(e), unsaved == null ? "" : "; the rotated secret is still NOT stored");
            }
            databaseFailing = true;
            ticks++;
        } catch (SecretCipher.WrongSecretKeyException e) {
            if (unreadable == null) {
                LOG.error("Webhook secrets: {}; the secrets in force stay as they are", e.getMessage());
            }
            unreadable = e.getMessage();
        } catch (RuntimeException e) {
            LOG.warn("Webhook secrets: poll failed: {}", RootCause.message(e));
        }
        expirePrevious();
    }

    /** A claim left 'calling' past the stale time: its instance stopped between MetaKit's answer and the store. */
    private void checkClaim() throws SQLException {
        Optional<WebhookSecretStore.Rotation> last = store.lastRotation();
        String stale = null;
        if (last.isPresent() && last.get().inProgress()
                && last.get().claimedAt().isBefore(clock.instant().minus(SecretRotator.STALE_CLAIM))) {
            WebhookSecretStore.Rotation r = last.get();
            stale = "the rotation asked by " + r.trigger() + " on " + r.claimedBy() + " at " + r.claimedAt()
                    + " never ended: MetaKit may sign with a secret no instance stored; rotate again now";
            if (!stale.equals(staleClaim)) {
                LOG.error("Webhook secrets: {}", stale);
            }
        }
        staleClaim = stale;
    }

    private void expirePrevious() {
        synchronized (lock) {
            if (held != null && previousInForce && !held.previousAcceptedAt(clock.instant())) {
                verification.accept(held);
                previousInForce = false;
                LOG.info("Webhook secret: the previous secret is no longer accepted (its window ended at {})",
                        held.previousUntil());
            }
        }
    }

    private void install(AcceptedSecrets secrets) {
        synchronized (lock) {
            verification.accept(secrets);
            held = secrets;
            previousInForce = secrets.previousAcceptedAt(clock.instant());
        }
    }

    private long heldGeneration() {
        synchronized (lock) {
            return held == null ? 0 : held.generation();
        }
    }

    /** The operator's rotation (ops page, ops API). */
    public Map<String, Object> rotate(String trigger) throws RotationException, InterruptedException {
        return describe(rotation().rotate(trigger, null, this::install));
    }

    /**
     * The schedule's step: rotates when METAKIT_WEBHOOK_ROTATE_EVERY is set and the last rotation is that old, on one
     * instance of all (the claim); returns whether it rotated.
     */
    public boolean rotateIfDue() throws RotationException, InterruptedException {
        if (rotateEveryDuration == null) {
            return false;
        }
        try {
            return rotation().rotate("schedule", rotateEveryDuration, this::install).rotated();
        } catch (RotationException e) {
            if (e.busy()) {
                return false; // another instance is rotating: this period is its
            }
            throw e;
        }
    }

    private SecretRotator rotation() throws RotationException {
        if (verification.configuredSecret()) {
            throw new RotationException("METAKIT_WEBHOOK_SECRET is set on this instance and wins over a stored"
                    + " secret, so a rotation would not reach it: nothing was rotated (docs/operations.md"
                    + " \"Rotating the webhook secret\")");
        }
        if (rotator == null) {
            throw new RotationException("METAKIT_WEBHOOK_SECRET_KEY is required to rotate: the new secret is stored"
                    + " under it; nothing was rotated");
        }
        return rotator;
    }

    private Map<String, Object> describe(SecretRotator.Outcome outcome) {
        if (outcome.unsaved() != null) {
            unsaved = outcome.unsaved();
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rotated", outcome.rotated());
        m.put("webhookId", outcome.webhookId());
        m.put("generation", outcome.accepted() == null ? null : outcome.accepted().generation());
        m.put("previousAcceptedUntil", outcome.accepted() == null ? null
                : String.valueOf(outcome.accepted().previousUntil()));
        m.put("saved", outcome.saved());
        if (outcome.unsaved() != null) {
            m.put("warning", outcome.unsaved().error() + "; this instance accepts both secrets and keeps trying to"
                    + " store them: do not stop it until the ops page says the secret is stored");
        }
        return m;
    }

    /** For the ops page and its API: where the secret comes from and how the last rotation went; never a secret. */
    public Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("source", verification.configuredSecret() ? "environment" : cipher == null ? "generated" : "database");
        AcceptedSecrets h;
        boolean previous;
        synchronized (lock) {
            h = held;
            previous = previousInForce;
        }
        m.put("generation", h == null ? null : h.generation());
        m.put("previousAcceptedUntil", h != null && previous ? String.valueOf(h.previousUntil()) : null);
        m.put("rotateEvery", rotateEveryDuration == null ? null : rotateEveryDuration.toString());
        try {
            store.lastRotation().ifPresent(r -> {
                m.put("lastRotation", r.state());
                m.put("lastRotationBy", r.trigger() + " on " + r.claimedBy());
                m.put("lastRotationAt", String.valueOf(r.finishedAt() != null ? r.finishedAt() : r.claimedAt()));
                m.put("lastRotationError", r.lastError());
            });
        } catch (SQLException e) {
            m.put("lastRotation", "unknown: " + RootCause.message(e));
        }
        m.put("problem", problem());
        return m;
    }

    /** What an operator must act on, in one line, or null. */
    public String problem() {
        SecretRotator.Unsaved u = unsaved;
        if (u != null) {
            return u.error() + "; this instance accepts both secrets and keeps trying to store them";
        }
        if (unreadable != null) {
            return unreadable;
        }
        return staleClaim;
    }

    /** True while the stored secret cannot be read with this instance's key: readiness is DOWN. */
    public boolean unreadable() {
        return unreadable != null;
    }

    /** True while a rotation whose instance stopped before storing its secret is the last one. */
    public boolean staleRotation() {
        return staleClaim != null;
    }

    /** 1 while a rotated secret is held only in this instance's memory. */
    public int unsavedCount() {
        return unsaved == null ? 0 : 1;
    }

    public void setVerification(SecretsInForce verification) { this.verification = verification; }
    public void setDataSource(DataSource dataSource) { this.dataSource = dataSource; }
    public void setSecretKey(String secretKey) { this.secretKey = secretKey; }
    public void setWebhookId(String webhookId) { this.webhookId = webhookId; }
    public void setApiUrl(String apiUrl) { this.apiUrl = apiUrl; }
    public void setApiKey(String apiKey) { this.apiKey = apiKey; }
    public void setConnectTimeoutMillis(long millis) { this.connectTimeoutMillis = millis; }
    public void setReadTimeoutMillis(long millis) { this.readTimeoutMillis = millis; }
    public void setRotateEvery(String rotateEvery) { this.rotateEvery = rotateEvery; }
    public void setInstanceId(String instanceId) { this.instanceId = instanceId; }
    public void setClock(Clock clock) { this.clock = clock; }
}
