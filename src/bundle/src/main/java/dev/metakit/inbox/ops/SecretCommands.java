package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.EnvironmentNames;
import dev.metakit.inbox.secret.MetaKitRotationClient;
import dev.metakit.inbox.secret.RotationException;
import dev.metakit.inbox.secret.SecretCipher;
import dev.metakit.inbox.secret.SecretRotator;
import dev.metakit.inbox.secret.WebhookSecretStore;

import javax.sql.DataSource;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.Function;

/**
 * {@link InboxCommand}'s secret commands: {@code rotate-secret} (the same rotation as the ops page's button, from a
 * shell), {@code store-secret} (moves METAKIT_WEBHOOK_SECRET into the database once) and {@code forget-secret}. They
 * print what happened and never a secret.
 */
final class SecretCommands {
    /** How often a rotation whose store failed tries again while this command waits. */
    static final Duration RETRY_SAVE = Duration.ofSeconds(2);

    private SecretCommands() {
    }

    static int run(String command, DataSource db, Map<String, String> env, PrintStream out, PrintStream err) {
        Function<String, String> variables = env::get;
        WebhookSecretStore store = new WebhookSecretStore(db);
        try {
            if (command.equals("forget-secret")) {
                out.println("deleted " + store.forget() + " stored webhook secret(s); the instances now need"
                        + " METAKIT_WEBHOOK_SECRET");
                return 0;
            }
            SecretCipher cipher = SecretCipher.fromSetting(
                    EnvironmentNames.read("metakit.webhook.secret-key", variables).orElse(null));
            long tolerance = Long.parseLong(EnvironmentNames.read("metakit.webhook.tolerance-seconds", variables)
                    .orElse("300"));
            MetaKitRotationClient metakit = new MetaKitRotationClient(
                    EnvironmentNames.read("metakit.api.url", variables).orElse("https://api.metakit.dev"),
                    EnvironmentNames.read("metakit.api.key", variables).orElse(""),
                    Duration.ofSeconds(3), Duration.ofSeconds(15));
            SecretRotator rotator = new SecretRotator(store, cipher, metakit,
                    EnvironmentNames.read("metakit.webhook.id", variables).orElse(null),
                    Duration.ofSeconds(tolerance), "command line", Clock.systemUTC());
            if (command.equals("store-secret")) {
                String secret = EnvironmentNames.read("metakit.webhook.secret", variables).orElseThrow(() ->
                        new ConfigurationException("store-secret stores METAKIT_WEBHOOK_SECRET: set it to the secret"
                                + " in use"));
                out.println(rotator.storeFirst(secret) ? "stored the webhook secret (generation 1)"
                        : "a webhook secret is stored already: nothing done (rotate-secret replaces it)");
                return 0;
            }
            return rotate(rotator, out, err);
        } catch (ConfigurationException | NumberFormatException e) {
            err.println("InboxCommand: " + e.getMessage());
            return 2;
        } catch (RotationException e) {
            err.println("InboxCommand: " + e.getMessage());
            return 1;
        } catch (SQLException e) {
            err.println("InboxCommand: database error: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("InboxCommand: interrupted");
            return 1;
        }
    }

    /**
     * Rotates; if MetaKit rotated but the store failed, keeps storing until MetaKit's window ends (every delivery
     * carries a signature with the old secret until then, so no instance rejects one meanwhile).
     */
    private static int rotate(SecretRotator rotator, PrintStream out, PrintStream err)
            throws RotationException, InterruptedException {
        SecretRotator.Outcome outcome = rotator.rotate("command line", null, accepted -> { });
        if (outcome.unsaved() != null) {
            Instant until = outcome.accepted().previousUntil();
            err.println("InboxCommand: " + outcome.unsaved().error() + "; retrying every " + RETRY_SAVE.toSeconds()
                    + " s until " + until + ": do not stop this command");
            while (true) {
                try {
                    rotator.retrySave(outcome.unsaved());
                    break;
                } catch (SQLException e) {
                    if (!Instant.now().plus(RETRY_SAVE).isBefore(until)) {
                        err.println("InboxCommand: the new secret could not be stored before MetaKit's window ended"
                                + " (" + e.getMessage() + "): run rotate-secret again as soon as the database answers");
                        return 1;
                    }
                    Thread.sleep(RETRY_SAVE.toMillis());
                }
            }
        }
        out.println("rotated the webhook secret of " + outcome.webhookId() + " (generation "
                + outcome.accepted().generation() + "); the previous secret is accepted until "
                + outcome.accepted().previousUntil() + "; every instance takes it within seconds");
        return 0;
    }
}
