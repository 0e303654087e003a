package dev.metakit.inbox.secret;

import dev.metakit.inbox.config.RootCause;
import dev.metakit.inbox.metakit.ApiRotation;
import dev.metakit.inbox.metakit.ApiWebhook;
import dev.metakit.inbox.metakit.MalformedPayloadException;
import dev.metakit.inbox.metakit.MetaKitApiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * One rotation, in the order that never leaves the new secret unknown to every instance: check the key reads the
 * stored secret; take the claim in the database (nothing is asked of MetaKit if that fails); ask MetaKit; hand the new
 * and the old secret to this instance at once ({@code onRotated}); store them, sealed. If storing fails the outcome
 * says so and carries what to store: the caller keeps trying (the instance accepts both meanwhile). Plain Java, no
 * Camel: the command line uses it as the bundle does.
 */
public class SecretRotator {
    private static final Logger LOG = LoggerFactory.getLogger(SecretRotator.class);
    /** How long the previous secret is kept when MetaKit does not say: long, as dropping it early rejects deliveries. */
    static final Duration WINDOW_WHEN_METAKIT_DOES_NOT_SAY = Duration.ofHours(24);
    /** A claim older than this belongs to an instance that stopped mid-rotation: another may take it over. */
    public static final Duration STALE_CLAIM = Duration.ofMinutes(2);

    private final WebhookSecretStore store;
    private final SecretCipher cipher;
    private final MetaKitRotationClient metakit;
    private final String configuredWebhookId;
    private final Duration tolerance;
    private final String instance;
    private final Clock clock;

    public SecretRotator(WebhookSecretStore store, SecretCipher cipher, MetaKitRotationClient metakit,
                         String configuredWebhookId, Duration tolerance, String instance, Clock clock) {
        this.store = store;
        this.cipher = cipher;
        this.metakit = metakit;
        this.configuredWebhookId = configuredWebhookId == null || configuredWebhookId.isBlank() ? null
                : configuredWebhookId.trim();
        this.tolerance = tolerance;
        this.instance = instance;
        this.clock = clock;
    }

    /** What a rotation ended with. {@code unsaved} is non-null when MetaKit rotated and storing failed. */
    public record Outcome(boolean rotated, String webhookId, AcceptedSecrets accepted, Unsaved unsaved) {
        static Outcome notDue() {
            return new Outcome(false, null, null, null);
        }

        public boolean saved() {
            return rotated && unsaved == null;
        }
    }

    /** A rotation MetaKit made whose secrets are not stored yet: {@link #retrySave} stores them. */
    public record Unsaved(String webhookId, WebhookSecretStore.SealedPair sealed, String keyId, String error) {
        @Override
        public String toString() {
            return "Unsaved[" + webhookId + ", generation " + sealed.generation() + ": " + error + "]";
        }
    }

    /**
     * @param trigger  who asked (ops page, command line, schedule), recorded with the claim
     * @param dueAfter for the schedule: rotate only if the last rotation is at least this old; null: now
     * @param onRotated told of the new secrets as soon as MetaKit answered, before they are stored
     */
    public Outcome rotate(String trigger, Duration dueAfter, Consumer<AcceptedSecrets> onRotated)
            throws RotationException, InterruptedException {
        String webhookId = webhookId();
        readStored(webhookId); // a wrong or missing key stops here, before the claim
        WebhookSecretStore.Claim claim;
        try {
            claim = store.claim(webhookId, trigger, instance, dueAfter, STALE_CLAIM);
        } catch (SQLException e) {
            throw new RotationException("the database is unavailable, nothing was rotated: " + RootCause.message(e));
        }
        if (!claim.due()) {
            return Outcome.notDue();
        }
        if (!claim.taken()) {
            WebhookSecretStore.Rotation held = claim.holder();
            throw new RotationException("a rotation of webhook " + webhookId + " is already in progress (asked by "
                    + held.trigger() + " on " + held.claimedBy() + " at " + held.claimedAt() + "): nothing was done",
                    true);
        }
        if (claim.holder() != null) {
            LOG.warn("Webhook secret rotation: taking over the claim {} took at {} and never ended (that instance"
                    + " stopped mid-rotation)", claim.holder().claimedBy(), claim.holder().claimedAt());
        }
        AcceptedSecrets before;
        try {
            before = readStored(webhookId);
        } catch (RotationException e) {
            fail(webhookId, e.getMessage());
            throw e;
        }
        ApiRotation answer;
        try {
            answer = metakit.rotate(webhookId);
        } catch (MetaKitApiException e) {
            String why = "MetaKit refused the rotation, nothing changed: " + e.getMessage();
            fail(webhookId, why);
            throw new RotationException(why);
        } catch (IOException | MalformedPayloadException e) {
            String why = "MetaKit gave no usable answer to the rotation (" + RootCause.message(e) + "): it may have rotated;"
                    + " rotate again now, so that the bundle learns the secret MetaKit signs with";
            fail(webhookId, why);
            throw new RotationException(why);
        }
        Instant now = clock.instant();
        Instant metakitUntil = answer.previousSecretExpiresAt() != null ? answer.previousSecretExpiresAt()
                : now.plus(WINDOW_WHEN_METAKIT_DOES_NOT_SAY);
        // a delivery signed just before the window ends may arrive up to the tolerance later, on a clock that differs
        AcceptedSecrets after = new AcceptedSecrets(before.generation() + 1, answer.secret(), before.current(),
                metakitUntil.plus(tolerance));
        onRotated.accept(after);
        WebhookSecretStore.SealedPair sealed = seal(webhookId, after);
        try {
            store.save(webhookId, cipher.keyId(), sealed, instance);
        } catch (SQLException e) {
            String why = "MetaKit rotated the secret of webhook " + webhookId + " but storing it failed: " + RootCause.message(e);
            LOG.error("Webhook secret rotation: {}; this instance accepts the new and the old secret and keeps"
                    + " trying to store them", why);
            return new Outcome(true, webhookId, after, new Unsaved(webhookId, sealed, cipher.keyId(), why));
        }
        LOG.info("Webhook secret rotated (webhook {}, generation {}, asked by {}): the previous secret is accepted"
                + " until {}", webhookId, after.generation(), trigger, after.previousUntil());
        return new Outcome(true, webhookId, after, null);
    }

    /** Stores a rotation whose first store failed; throws while the database still refuses. */
    public void retrySave(Unsaved unsaved) throws SQLException {
        store.save(unsaved.webhookId(), unsaved.keyId(), unsaved.sealed(), instance);
        LOG.info("Webhook secret rotation: the new secret of webhook {} (generation {}) is stored now",
                unsaved.webhookId(), unsaved.sealed().generation());
    }

    /**
     * Stores {@code secret} as the first generation (moving a secret from the environment into the database), unless
     * one is stored already. Asks nothing of MetaKit.
     */
    public boolean storeFirst(String secret) throws SQLException, RotationException, InterruptedException {
        String webhookId = webhookId();
        if (store.read().isPresent()) {
            return false;
        }
        AcceptedSecrets first = new AcceptedSecrets(1, secret, null, null);
        store.save(webhookId, cipher.keyId(), seal(webhookId, first), null);
        LOG.info("Webhook secret stored (webhook {}, generation 1)", webhookId);
        return true;
    }

    /** The stored secrets of this webhook, decrypted (a wrong key: {@link SecretCipher.WrongSecretKeyException}). */
    AcceptedSecrets readStored(String webhookId) throws RotationException {
        Optional<WebhookSecretStore.Sealed> row;
        try {
            row = store.read();
        } catch (SQLException e) {
            throw new RotationException("the database is unavailable, nothing was rotated: " + RootCause.message(e));
        }
        if (row.isEmpty()) {
            throw new RotationException("no webhook secret is stored to rotate from: the secret in use is set by"
                    + " METAKIT_WEBHOOK_SECRET; store it first (docs/operations.md \"Rotating the webhook secret\")");
        }
        if (!row.get().webhookId().equals(webhookId)) {
            throw new RotationException("the stored secret is webhook " + row.get().webhookId() + "'s, not "
                    + webhookId + "'s: METAKIT_WEBHOOK_ID names another webhook");
        }
        return open(row.get(), cipher);
    }

    /** Decrypts a stored row. */
    public static AcceptedSecrets open(WebhookSecretStore.Sealed row, SecretCipher cipher) {
        String current = cipher.decrypt(row.current(), row.keyId(), context(row.webhookId(), row.generation(),
                "current"));
        String previous = row.previous() == null ? null : cipher.decrypt(row.previous(), row.keyId(),
                context(row.webhookId(), row.generation(), "previous"));
        return new AcceptedSecrets(row.generation(), current, previous, row.previousUntil());
    }

    private WebhookSecretStore.SealedPair seal(String webhookId, AcceptedSecrets s) {
        byte[] current = cipher.encrypt(s.current(), context(webhookId, s.generation(), "current"));
        byte[] previous = s.previous() == null ? null
                : cipher.encrypt(s.previous(), context(webhookId, s.generation(), "previous"));
        return new WebhookSecretStore.SealedPair(s.generation(), current, previous,
                s.previous() == null ? null : s.previousUntil());
    }

    /** What a ciphertext is bound to: copied into another webhook's or generation's row, it does not decrypt. */
    static String context(String webhookId, long generation, String role) {
        return "metakit-inbox/webhook-secret/" + webhookId + "/" + generation + "/" + role;
    }

    /** METAKIT_WEBHOOK_ID, or the only webhook MetaKit lists for this API key. */
    public String webhookId() throws RotationException, InterruptedException {
        if (configuredWebhookId != null) {
            return configuredWebhookId;
        }
        List<ApiWebhook> webhooks;
        try {
            webhooks = metakit.webhooks();
        } catch (IOException | RuntimeException e) {
            throw new RotationException("cannot list MetaKit's webhooks to find which one to rotate (" + RootCause.message(e)
                    + "): set METAKIT_WEBHOOK_ID");
        }
        if (webhooks.size() != 1) {
            throw new RotationException("MetaKit lists " + webhooks.size() + " webhooks for this API key: set"
                    + " METAKIT_WEBHOOK_ID to the one this bundle receives");
        }
        return webhooks.get(0).id();
    }

    private void fail(String webhookId, String why) {
        try {
            store.fail(webhookId, instance, why);
        } catch (SQLException e) {
            // the claim then goes stale and is taken over after STALE_CLAIM: nothing was rotated
            LOG.warn("Webhook secret rotation: could not record its failure: {}", RootCause.message(e));
        }
    }
}
