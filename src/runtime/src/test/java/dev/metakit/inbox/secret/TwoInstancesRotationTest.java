package dev.metakit.inbox.secret;

import dev.metakit.inbox.sandbox.Delivery;
import dev.metakit.inbox.sandbox.DeliveryAttempt;
import dev.metakit.inbox.sandbox.DeliveryLog;
import dev.metakit.inbox.sandbox.SecretRotation;
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
    /**
     * The sandbox signs with the previous secret for this long after a rotation: the instance not asked must have the
     * new one before its end (it polls every second), so ten polls' worth, that a loaded machine's late ones still
     * fall inside it.
     */
    private static final Duration WINDOW = Duration.ofSeconds(10);

    @Test
    void oneRotationOnOneInstanceMovesBothAlongAndNoDeliveryEitherSecretSignedIsRejected() throws Exception {
        int portA = RunningInbox.freePort();
        int portB = RunningInbox.freePort();
        try (LogCapture logs = LogCapture.atOrAbove(Level.TRACE);
             TcpProxy proxy = new TcpProxy(List.of(portA, portB));
             RotationRig rig = new RotationRig(proxy.webhookUri().toString(), WINDOW, 400)) {
            rig.storeFirstSecret();
            AtomicReference<SecretRotation> metakitRotation = new AtomicReference<>();
            rig.sandbox.onRotation(metakitRotation::set);
            // no METAKIT_WEBHOOK_ID: the only webhook MetaKit lists is the one rotated; every other setting a default
            RunningInbox instanceA = rig.start(rig.settings(portA));
            RunningInbox instanceB = rig.start(rig.settings(portB));

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
            // the previous secret is kept through MetaKit's window and the signature tolerance (300 s) after it
            assertThat(rotated.body()).contains("\"previousAcceptedUntil\":\""
                    + metakitRotation.get().previousSignedUntil().plusSeconds(300) + "\"");

            // the instance asked accepts the new secret at once; the other one by its poll, inside MetaKit's window
            assertThat(rig.postSignedWith(instanceA, newSecret)).isEqualTo(200);
            await().atMost(WINDOW).until(() -> rig.postSignedWith(instanceB, newSecret) == 200);
            assertThat(Duration.between(rotatedAt, Instant.now())).isLessThan(WINDOW);
            assertThat(rig.postSignedWith(instanceA, RunningInbox.SECRET)).isEqualTo(200);
            assertThat(rig.postSignedWith(instanceB, RunningInbox.SECRET)).isEqualTo(200);

            await().atMost(Duration.ofSeconds(30)).until(rig.sandbox::trafficDone);
            // trades after MetaKit's window, however late in the traffic the rotation came on a loaded machine: their
            // deliveries are signed with the new secret alone
            Instant windowEnd = metakitRotation.get().previousSignedUntil();
            await().atMost(WINDOW.plusSeconds(5)).until(() -> Instant.now().isAfter(windowEnd));
            rig.sandbox.runOperations(3);
            assertThat(rig.sandbox.quiesce(Duration.ofSeconds(30))).isTrue();
            DeliveryLog log = rig.sandbox.deliveries();
            assertThat(log.deliveries()).as("signed with both secrets during the window").anyMatch(d -> d.v1s().size() == 2);
            Delivery last = log.deliveries().get(log.deliveries().size() - 1);
            assertThat(last.v1s()).as("after the window, signed with the new secret only")
                    .containsExactly(TestSignatures.v1(newSecret, last.t(), last.body()));
            String failedAttempts = log.attempts().stream().filter(at -> !at.succeeded())
                    .map(at -> at.status() + " " + at.error()).toList().toString();
            assertThat(log.stats().givenUp()).as(failedAttempts).isZero();
            assertThat(log.deliveries()).allMatch(Delivery::acknowledged);
            // neither secret refused: every answer a 2xx. An attempt a loaded machine did not answer within MetaKit's
            // 5 s is sent again, as MetaKit does, and its delivery is acknowledged (above)
            System.out.printf("rotation: %d attempts, %d not answered within the request timeout%n",
                    log.attempts().size(), log.attempts().stream().filter(DeliveryAttempt::timedOut).count());
            assertThat(log.attempts().stream().filter(at -> !at.timedOut()))
                    .as("no attempt answered other than 2xx: %s", failedAttempts).allMatch(DeliveryAttempt::succeeded);
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

    @Test
    void theOldSecretIsRefusedByBothInstancesFromTheWindowsEndAndNotBefore() throws Exception {
        try (LogCapture logs = LogCapture.atOrAbove(Level.TRACE);
             RotationRig rig = new RotationRig("http://127.0.0.1:9/hooks/metakit", WINDOW, 0)) {
            rig.storeFirstSecret();
            // 1 s instead of the default 300 s, which is added to MetaKit's window: so that the test sees the old
            // secret go. No sandbox traffic here: the test's own deliveries are signed as they are sent
            Map<String, String> a = rig.settings(RunningInbox.freePort());
            a.put("metakit.webhook.tolerance-seconds", "1");
            Map<String, String> b = rig.settings(RunningInbox.freePort());
            b.put("metakit.webhook.tolerance-seconds", "1");
            RunningInbox instanceA = rig.start(a);
            RunningInbox instanceB = rig.start(b);

            HttpResponse<String> rotated = rig.ops(instanceB, "POST", "/webhook-secret/rotate");
            assertThat(rotated.statusCode()).as(rotated.body()).isEqualTo(200);
            Instant previousUntil = Instant.parse(
                    rotated.body().replaceAll(".*\"previousAcceptedUntil\":\"([^\"]+)\".*", "$1"));
            String newSecret = rig.sandbox.currentSecret();
            await().atMost(WINDOW).until(() -> rig.postSignedWith(instanceA, newSecret) == 200);
            assertThat(Instant.now()).as("A took the new secret inside the window").isBefore(previousUntil);
            assertThat(rig.postSignedWith(instanceA, RunningInbox.SECRET)).isEqualTo(200);

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
            assertThat(rig.postSignedWith(instanceA, newSecret)).isEqualTo(200);
            assertThat(rig.postSignedWith(instanceB, newSecret)).isEqualTo(200);
            List<String> secrets = List.of(RunningInbox.SECRET, newSecret, rig.key);
            assertThat(logs.lines()).as("log lines").noneMatch(line -> secrets.stream().anyMatch(line::contains));
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
