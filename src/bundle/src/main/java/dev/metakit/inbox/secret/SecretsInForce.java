package dev.metakit.inbox.secret;

/**
 * Where the webhook's secrets are in force: the ingest's signature check ({@code webhookVerification}). The secrets
 * {@link WebhookSecrets} loads or rotates are put in force here; what the check was configured with decides whether
 * there is anything to load.
 */
public interface SecretsInForce {
    /** True when METAKIT_WEBHOOK_SECRET is set: it wins over a stored secret and is never replaced by a rotation. */
    boolean configuredSecret();

    /** How far a signature's timestamp may stray: how long the previous secret is still needed after a rotation. */
    long getToleranceSeconds();

    /** The dev run: a throwaway secret may be generated when none is stored. */
    boolean isDevMode();

    /** Puts a throwaway secret in force (the dev run, when neither the settings nor the database hold one). */
    void generateSecret();

    /** Puts stored secrets in force: the current one, and the previous one while its window is open. */
    void accept(AcceptedSecrets accepted);
}
