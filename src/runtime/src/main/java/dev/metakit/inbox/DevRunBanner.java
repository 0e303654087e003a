package dev.metakit.inbox;

import dev.metakit.inbox.db.DatabaseSettings;
import dev.metakit.inbox.ingest.WebhookVerification;
import org.apache.camel.CamelContext;
import org.apache.camel.main.BaseMainSupport;
import org.apache.camel.main.MainListenerSupport;

/**
 * In the dev run, once everything is up: the generated secret and a command that sends a correctly signed test
 * delivery, ready to paste. Printed to the console on purpose (it is a throwaway secret), never logged.
 */
final class DevRunBanner extends MainListenerSupport {

    @Override
    public void afterStart(BaseMainSupport main) {
        CamelContext context = main.getCamelContext();
        if (!Boolean.parseBoolean(context.resolvePropertyPlaceholders("{{metakit.dev-mode:false}}"))) {
            return;
        }
        WebhookVerification verification = context.getRegistry()
                .lookupByNameAndType("webhookVerification", WebhookVerification.class);
        // a configured secret is the user's: never printed
        if (verification == null || !verification.secretGenerated()) {
            return;
        }
        String url = "http://localhost:" + context.resolvePropertyPlaceholders("{{camel.server.port}}")
                + context.resolvePropertyPlaceholders("{{metakit.webhook.path}}");
        Database database = Database.of(context.resolvePropertyPlaceholders("{{metakit.database.data-source-bean}}"),
                context.resolvePropertyPlaceholders("{{metakit.database.url}}"),
                context.resolvePropertyPlaceholders("{{metakit.database.embedded-dir}}"));
        System.out.println(text(verification.currentSecret(), url, database));
    }

    /** The database this run uses, in words that never carry a credential. */
    record Database(String description, boolean embedded) {
        static Database of(String hostDataSourceBean, String url, String embeddedDirectory) {
            if (hostDataSourceBean != null && !hostDataSourceBean.isBlank()) {
                return new Database("the host's DataSource '" + hostDataSourceBean.trim() + "'", false);
            }
            DatabaseSettings settings = DatabaseSettings.parse(url, null, null);
            return settings.embedded()
                    ? new Database("embedded PostgreSQL, data in " + embeddedDirectory, true)
                    : new Database("PostgreSQL at " + settings.describe(), false);
        }
    }

    static String text(String secret, String url, Database database) {
        return """

                ==================================================================================================
                 metakit-inbox DEV RUN: not for production (generated webhook secret)
                 Webhook endpoint : %2$s
                 Database         : %4$s
                 Dev secret       : %1$s
                 Send a signed test delivery (paste into a shell):
                %3$s
                 Leave the dev run: set METAKIT_WEBHOOK_SECRET%5$s and run java -jar target/metakit-inbox.jar
                ==================================================================================================
                """.formatted(secret, url, sendCommand(secret, url), database.description(),
                database.embedded() ? " (and DATABASE_URL for a PostgreSQL of yours)" : "");
    }

    /** A shell command that signs a test delivery with the secret (openssl) and posts it (curl). */
    static String sendCommand(String secret, String url) {
        return """

                body='{"event":"webhook.test","account_id":1,"created_at":"2026-12-02T10:15:30Z","data":{}}'; \\
                t=$(date +%%s); sig=$(printf '%%s.%%s' "$t" "$body" | openssl dgst -sha256 -hmac '%1$s' -r | cut -d' ' -f1); \\
                curl -i -X POST %2$s -H 'Content-Type: application/json' \\
                  -H 'X-MetaKit-Event: webhook.test' -H "X-MetaKit-Signature: t=$t,v1=$sig" --data "$body"
                """.formatted(secret, url);
    }
}
