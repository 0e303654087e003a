package dev.metakit.inbox.sandbox;

import java.time.Instant;

/** A rotation's outcome: set {@code secret} as the consumer's current secret, {@code previousSecret} as its previous. */
public record SecretRotation(String webhookId, String secret, String previousSecret, Instant previousSignedUntil) {
}
