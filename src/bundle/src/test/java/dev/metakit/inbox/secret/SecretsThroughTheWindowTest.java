package dev.metakit.inbox.secret;

import dev.metakit.inbox.support.MutableClock;
import dev.metakit.inbox.ingest.WebhookVerification;
import dev.metakit.inbox.signature.SignatureVerificationException;
import dev.metakit.inbox.support.TestEvents;
import dev.metakit.inbox.support.TestSignatures;
import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The verifier through a rotation, on a clock the test moves: before it the old secret only; from it both, and
 * deliveries MetaKit signs with both; from the window's end the new one only, what MetaKit then sends.
 */
class SecretsThroughTheWindowTest {
    private static final String OLD = "whsec_window_old_0123456789";
    private static final String NEW = "whsec_window_new_9876543210";
    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-04T12:00:00Z"));
    private final DefaultCamelContext camel = new DefaultCamelContext();

    @Test
    void bothSecretsAreAcceptedThroughTheWindowAndTheOldOneNotAfterIt() throws Exception {
        WebhookVerification verification = new WebhookVerification();
        verification.setClock(clock);
        verification.setSecretKey(SecretCipherTest.newKey());
        verification.start();
        verification.accept(new AcceptedSecrets(1, OLD, null, null));
        accepted(verification, OLD);
        refused(verification, NEW);

        Instant until = clock.instant().plus(Duration.ofMinutes(5));
        AcceptedSecrets rotated = new AcceptedSecrets(2, NEW, OLD, until);
        verification.accept(rotated);
        accepted(verification, NEW);
        accepted(verification, OLD);
        accepted(verification, NEW, OLD);

        clock.set(until.minusSeconds(1));
        verification.accept(rotated); // what the poll does every second
        accepted(verification, OLD);

        clock.set(until);
        verification.accept(rotated);
        refused(verification, OLD);
        accepted(verification, NEW);
        accepted(verification, NEW, OLD);
    }

    private void accepted(WebhookVerification verification, String... secrets) {
        assertThatCode(() -> verification.process(delivery(secrets))).doesNotThrowAnyException();
    }

    private void refused(WebhookVerification verification, String secret) {
        assertThatThrownBy(() -> verification.process(delivery(secret)))
                .isInstanceOf(SignatureVerificationException.class).hasMessageNotContaining(secret);
    }

    private Exchange delivery(String... secrets) {
        byte[] body = TestEvents.event("webhook.test", 1, 1);
        long t = clock.instant().getEpochSecond();
        Exchange exchange = new DefaultExchange(camel);
        exchange.getMessage().setBody(body);
        exchange.getMessage().setHeader(WebhookVerification.SIGNATURE_HEADER, secrets.length == 1
                ? TestSignatures.header(secrets[0], t, body) : TestSignatures.header(secrets[0], secrets[1], t, body));
        return exchange;
    }
}
