package dev.metakit.inbox;

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
        System.out.println(text(verification.currentSecret(), url));
    }

    static String text(String secret, String url) {
        return """

                ==================================================================================================
                 metakit-inbox DEV RUN: not for production (generated webhook secret, embedded PostgreSQL in ./data)
                 Webhook endpoint : %2$s
                 Dev secret       : %1$s
                 Send a signed test delivery (paste into a shell):
                %3$s
                 Leave the dev run: set METAKIT_WEBHOOK_SECRET (and DATABASE_URL) and run java -jar target/metakit-inbox.jar
                ==================================================================================================
                """.formatted(secret, url, sendCommand(secret, url));
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
