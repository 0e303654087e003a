package dev.metakit.inbox.ingest;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.ContextAwareBean;
import dev.metakit.inbox.config.SecretSettings;
import dev.metakit.inbox.secret.AcceptedSecrets;
import dev.metakit.inbox.secret.SecretsInForce;
import dev.metakit.inbox.signature.SignatureVerifier;
import dev.metakit.inbox.signature.VerifiedSignature;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The ingest route's first step: verifies the signature over the raw body bytes and, only if it holds, puts the
 * {@link Delivery} on the exchange for the inbox. Rejections propagate as
 * {@code SignatureVerificationException}, which the route answers with 400 and its reason.
 */
public class WebhookVerification extends ContextAwareBean implements Processor, SecretsInForce {
    public static final String SIGNATURE_HEADER = "X-MetaKit-Signature";
    public static final String EVENT_HEADER = "X-MetaKit-Event";

    private volatile String secret;
    private volatile String previousSecret;
    private long toleranceSeconds = 300;
    /** The longest tolerance: an hour, far past MetaKit's clock skew, and within the day the claim looks around now. */
    static final long MAX_TOLERANCE_SECONDS = 3600;
    private boolean devMode;
    private volatile boolean secretGenerated;
    private Clock clock = Clock.systemUTC();
    private volatile SignatureVerifier verifier;
    private boolean storedSecretsPossible;
    private boolean configuredSecret;

    /**
     * Builds the verifier; a missing secret stops startup, except in the dev run where one is generated, and when
     * METAKIT_WEBHOOK_SECRET_KEY is set: then the secret is the stored one, which {@code webhookSecrets} installs when
     * the context starts (before any route).
     */
    public void start() {
        if (toleranceSeconds < 0 || toleranceSeconds > MAX_TOLERANCE_SECONDS) {
            // the claim looks for pending rows signed up to a day after now, and from two hours before it once older
            // days are worked (InboxClaims): a delivery within the tolerance is always in that range
            throw new ConfigurationException("METAKIT_WEBHOOK_TOLERANCE_SECONDS must be from 0 to "
                    + MAX_TOLERANCE_SECONDS + " (an hour); it is " + toleranceSeconds);
        }
        secret = secret(SecretSettings.WEBHOOK_SECRET, secret);
        previousSecret = secret(SecretSettings.WEBHOOK_SECRET_PREVIOUS, previousSecret);
        if (!storedSecretsPossible) {
            storedSecretsPossible = !isBlank(secret(SecretSettings.WEBHOOK_SECRET_KEY, null));
        }
        configuredSecret = !isBlank(secret);
        if (!configuredSecret) {
            if (storedSecretsPossible) {
                return;
            }
            if (!devMode) {
                throw new ConfigurationException("METAKIT_WEBHOOK_SECRET is required: set it to your MetaKit "
                        + "webhook's signing secret, or set METAKIT_WEBHOOK_SECRET_KEY to use the secret stored in the "
                        + "database (or use the dev run, which generates one)");
            }
            generateSecret();
            return;
        }
        secrets(secret, previousSecret);
    }

    /**
     * The dev run's throwaway secret, when neither the settings nor the database hold one: made once per process, so a
     * bean started again (its route file saved) keeps the secret the dev run printed.
     */
    @Override
    public void generateSecret() {
        if (secretGenerated) {
            return;
        }
        secret = generateDevSecret();
        secretGenerated = true;
        secrets(secret, null);
    }

    /**
     * True when METAKIT_WEBHOOK_SECRET is set: that secret (and METAKIT_WEBHOOK_SECRET_PREVIOUS) wins over a stored
     * one, and is never replaced by a rotation.
     */
    @Override
    public boolean configuredSecret() {
        return configuredSecret;
    }

    /** Whether a secret is in force (false only before {@code webhookSecrets} has installed the stored one). */
    public boolean hasSecret() {
        return verifier != null;
    }

    /**
     * Installs stored secrets: {@code accepted.current()}, and its previous one if its window is still open at this
     * verifier's clock (the caller installs again once it has closed).
     */
    @Override
    public void accept(AcceptedSecrets accepted) {
        List<String> now = accepted.at(clock.instant());
        secrets(now.get(0), now.size() > 1 ? now.get(1) : null);
    }

    /**
     * Replaces the accepted secrets at runtime (a rotation): deliveries verified from now on accept {@code current}
     * and, if not blank, {@code previous}. A delivery being verified meanwhile uses the old or the new pair, never a
     * mix.
     */
    public synchronized void secrets(String current, String previous) {
        if (isBlank(current)) {
            throw new IllegalArgumentException("the current webhook secret must not be blank");
        }
        List<String> secrets = new ArrayList<>(2);
        secrets.add(current);
        if (!isBlank(previous)) {
            secrets.add(previous);
        }
        verifier = new SignatureVerifier(secrets, Duration.ofSeconds(toleranceSeconds), clock);
        secret = current;
        previousSecret = previous;
    }

    @Override
    public void process(Exchange exchange) throws Exception {
        byte[] body = exchange.getMessage().getBody(byte[].class);
        if (body == null) {
            body = new byte[0];
        }
        String header = DeliveryHeaders.single(exchange.getMessage(), SIGNATURE_HEADER);
        String event = DeliveryHeaders.single(exchange.getMessage(), EVENT_HEADER);
        VerifiedSignature verified = verifier().verify(header, body);
        DeliveryFields.Fields fields = DeliveryFields.read(body);
        if (isBlank(event)) {
            event = fields.event();
        }
        Delivery delivery = new Delivery(verified.deliveryKey(), event, fields.accountId(), body,
                java.time.Instant.ofEpochSecond(verified.timestamp()));
        exchange.setProperty(InboxRepository.DELIVERY_PROPERTY, delivery);
        // the plain key as well, so the route reads it without an OGNL call
        exchange.setProperty(InboxRepository.DELIVERY_KEY_PROPERTY, delivery.key());
    }

    private SignatureVerifier verifier() {
        SignatureVerifier v = verifier;
        if (v == null) {
            throw new IllegalStateException("webhookVerification is not started");
        }
        return v;
    }

    /** True when no secret was configured and the dev run generated one (a throwaway, fit to be printed). */
    public boolean secretGenerated() {
        return secretGenerated;
    }

    /** The secret in force, for the dev run's banner; never logged. */
    public String currentSecret() {
        return secret;
    }

    private static String generateDevSecret() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return "whsec_dev_" + HexFormat.of().formatHex(bytes);
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }

    public void setSecret(String secret) { this.secret = secret; }
    public void setPreviousSecret(String previousSecret) { this.previousSecret = previousSecret; }
    public void setToleranceSeconds(long toleranceSeconds) { this.toleranceSeconds = toleranceSeconds; }
    public void setDevMode(boolean devMode) { this.devMode = devMode; }
    /** Only whether it is set is kept: with it, a missing METAKIT_WEBHOOK_SECRET means the stored secret. */
    public void setSecretKey(String key) { this.storedSecretsPossible = !isBlank(key); }
    @Override public long getToleranceSeconds() { return toleranceSeconds; }
    @Override public boolean isDevMode() { return devMode; }
    public void setClock(Clock clock) { this.clock = clock; }
}
