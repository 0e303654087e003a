package dev.metakit.inbox.secret;

import dev.metakit.inbox.sandbox.Delivery;
import dev.metakit.inbox.sandbox.DeliveryLog;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TcpProxy;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The one operator action (the ops API of one instance) rotates the secret of two instances on one database behind one
 * address, under traffic from the sandbox: both accept the new secret within seconds, the old one until MetaKit's
 * window ends and not after, every delivery either secret signed is acknowledged, and no secret is in clear in any log
 * line, in the database or in the ops API.
 */
class TwoInstancesRotationTest {
    /** The sandbox signs with the previous secret for this long after a rotation. */
    private static final Duration WINDOW = Duration.ofSeconds(4);

    @Test
    void oneRotationOnOneInstanceMovesBothAlongAndNoDeliveryEitherSecretSignedIsRejected() throws Exception {
        int portA = RunningInbox.freePort();
        int portB = RunningInbox.freePort();
        try (LogCapture logs = LogCapture.atOrAbove(Level.TRACE);
             TcpProxy proxy = new TcpProxy(List.of(portA, portB));
             RotationRig rig = new RotationRig(proxy.webhookUri().toString(), WINDOW, 400)) {
            rig.storeFirstSecret();
            // the default tolerance (300 s) is added to MetaKit's window before the previous secret goes: 5 s here, so
            // that the test sees it go; the sandbox delivers each event at once, well within 5 s
            Map<String, String> a = rig.settings(portA);
            a.put("metakit.webhook.tolerance-seconds", "5");
            Map<String, String> b = rig.settings(portB);
            b.put("metakit.webhook.tolerance-seconds", "5");
            // no METAKIT_WEBHOOK_ID: the only webhook MetaKit lists is the one rotated
            RunningInbox instanceA = rig.start(a);
            RunningInbox instanceB = rig.start(b);

            rig.sandbox.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> rig.sandbox.deliveries().deliveries().size() >= 40);
            HttpResponse<String> rotated = rig.ops(instanceA, "POST", "/webhook-secret/rotate");
            Instant rotatedAt = Instant.now();
            assertThat(rotated.statusCode()).as(rotated.body()).isEqualTo(200);
            assertThat(rotated.body()).contains("\"rotated\":true", "\"webhookId\":\"wh_1\"", "\"generation\":2",
                    "\"saved\":true");
            String newSecret = rig.sandbox.currentSecret();
            assertThat(newSecret).isNotEqualTo(RunningInbox.SECRET);
            assertThat(rig.sandbox.previousSecret()).isEqualTo(RunningInbox.SECRET);
            Instant previousUntil = rig.sandbox.webhook().rotationWindowOpen()
                    ? Instant.parse(rotated.body().replaceAll(".*\"previousAcceptedUntil\":\"([^\"]+)\".*", "$1"))
                    : null;
            assertThat(previousUntil).as("the sandbox's window is still open as the answer comes").isNotNull();

            // the instance asked accepts the new secret at once; the other one within seconds (its poll)
            assertThat(rig.postSignedWith(instanceA, newSecret)).isEqualTo(200);
            await().atMost(Duration.ofSeconds(5)).until(() -> rig.postSignedWith(instanceB, newSecret) == 200);
            assertThat(Duration.between(rotatedAt, Instant.now())).isLessThan(Duration.ofSeconds(5));
            // and both still take the old one while MetaKit's window (plus the tolerance) lasts
            assertThat(Instant.now()).isBefore(previousUntil);
            assertThat(rig.postSignedWith(instanceA, RunningInbox.SECRET)).isEqualTo(200);
            assertThat(rig.postSignedWith(instanceB, RunningInbox.SECRET)).isEqualTo(200);

            // then the old one goes, on both, not before the window's end
            AtomicReference<Instant> oldRefusedAt = new AtomicReference<>();
            await().atMost(Duration.between(Instant.now(), previousUntil).plusSeconds(5)).until(() -> {
                boolean refused = rig.postSignedWith(instanceA, RunningInbox.SECRET) == 400
                        && rig.postSignedWith(instanceB, RunningInbox.SECRET) == 400;
                if (refused) {
                    oldRefusedAt.set(Instant.now());
                }
                return refused;
            });
            assertThat(oldRefusedAt.get()).isAfterOrEqualTo(previousUntil);
            assertThat(rig.postSignedWith(instanceB, newSecret)).isEqualTo(200);

            await().atMost(Duration.ofSeconds(30)).until(rig.sandbox::trafficDone);
            assertThat(rig.sandbox.quiesce(Duration.ofSeconds(30))).isTrue();
            DeliveryLog log = rig.sandbox.deliveries();
            assertThat(log.deliveries()).as("signed with both secrets during the window").anyMatch(d -> d.v1s().size() == 2);
            Delivery last = log.deliveries().get(log.deliveries().size() - 1);
            assertThat(last.v1s()).as("after the window, signed with the new secret only")
                    .containsExactly(TestSignatures.v1(newSecret, last.t(), last.body()));
            assertThat(log.stats().givenUp()).isZero();
            assertThat(log.deliveries()).allMatch(Delivery::acknowledged);
            assertThat(log.attempts()).as("no attempt answered other than 2xx").allMatch(a2 -> a2.succeeded());
            assertThat(proxy.connections(0)).as("instance A took deliveries").isPositive();
            assertThat(proxy.connections(1)).as("instance B took deliveries").isPositive();

            HttpResponse<String> status = rig.ops(instanceB, "GET", "/webhook-secret");
            assertThat(status.body()).contains("\"source\":\"database\"", "\"generation\":2", "\"lastRotation\":\"done\"",
                    "\"lastRotationBy\":\"ops page on ");
            List<String> secrets = List.of(RunningInbox.SECRET, newSecret, rig.key);
            assertThat(rotated.body() + status.body()).doesNotContain(secrets);
            assertThat(storedBytes()).doesNotContain(secrets);
            assertThat(logs.lines()).as("log lines").noneMatch(line -> secrets.stream().anyMatch(line::contains));
            assertThat(logs.lines()).anyMatch(l -> l.contains("Webhook secret rotated (webhook wh_1, generation 2"));
        }
    }

    /** Every stored ciphertext, as text (a secret in clear would show). */
    private static String storedBytes() throws Exception {
        StringBuilder all = new StringBuilder();
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select current_secret, previous_secret from webhook_secrets")) {
            while (rs.next()) {
                all.append(new String(rs.getBytes(1), StandardCharsets.ISO_8859_1));
                byte[] previous = rs.getBytes(2);
                all.append(previous == null ? "" : new String(previous, StandardCharsets.ISO_8859_1));
            }
        }
        assertThat(all).isNotEmpty();
        return all.toString();
    }
}
