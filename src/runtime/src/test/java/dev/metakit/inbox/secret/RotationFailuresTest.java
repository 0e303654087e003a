package dev.metakit.inbox.secret;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.Metrics;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.StoppablePostgres;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The ways a rotation goes wrong, each against the sandbox: MetaKit refusing it, two instances asked at once, the
 * database stopping between MetaKit's answer and the store, the key missing or wrong, a secret set in the environment.
 * Each ends with a clear error or a loud state, no delivery either secret signed rejected, and no secret or key in
 * any log line.
 */
class RotationFailuresTest {
    /** No webhook traffic in these tests: the sandbox only answers the API. */
    private static final String NO_WEBHOOK = "http://127.0.0.1:9/hooks/metakit";
    private LogCapture logs;
    private final List<String> secrets = new ArrayList<>(List.of(RunningInbox.SECRET));

    @BeforeEach
    void captureLogs() {
        logs = LogCapture.atOrAbove(Level.TRACE);
    }

    @AfterEach
    void noSecretInAnyLogLine() {
        logs.close();
        assertThat(logs.lines()).as("log lines").noneMatch(line -> secrets.stream().anyMatch(line::contains));
    }

    private RotationRig rig(Duration window) throws IOException {
        RotationRig rig = new RotationRig(NO_WEBHOOK, window, 0);
        secrets.add(rig.key);
        return rig;
    }

    @Test
    void metakitRefusingTheRotationChangesNothingAndSaysWhy() throws Exception {
        try (RotationRig rig = rig(Duration.ofMinutes(5))) {
            // the secret of a webhook MetaKit does not know (any more): it answers 404 to its rotation
            assertThat(rig.rotator(rig.key, "wh_9").storeFirst(RunningInbox.SECRET)).isTrue();
            Map<String, String> settings = rig.settings(RunningInbox.freePort());
            settings.put("metakit.webhook.id", "wh_9");
            RunningInbox inbox = rig.start(settings);

            HttpResponse<String> answer = rig.ops(inbox, "POST", "/webhook-secret/rotate");

            assertThat(answer.statusCode()).isEqualTo(502);
            assertThat(answer.body()).contains("MetaKit refused the rotation, nothing changed: MetaKit answered 404"
                    + " to POST /v1/webhooks/wh_9/rotate: unknown webhook wh_9");
            assertThat(rig.sandbox.currentSecret()).isEqualTo(RunningInbox.SECRET);
            assertThat(rig.storedGeneration()).isEqualTo(1);
            assertThat(rig.ops(inbox, "GET", "/webhook-secret").body()).contains("\"lastRotation\":\"failed\"",
                    "\"lastRotationError\":\"MetaKit refused the rotation");
            assertThat(rig.postSignedWith(inbox, RunningInbox.SECRET)).isEqualTo(200);
        }
    }

    @Test
    void metakitNotAnsweringInTimeIsReportedAsPerhapsRotatedAndTheNextRotationRecovers() throws Exception {
        try (RotationRig rig = rig(Duration.ofMinutes(5))) {
            rig.storeFirstSecret();
            CountDownLatch release = new CountDownLatch(1);
            AtomicBoolean first = new AtomicBoolean(true);
            // MetaKit rotates, then answers only after the bundle has given up waiting
            rig.sandbox.onRotation(r -> {
                if (first.getAndSet(false)) {
                    awaitLatch(release);
                }
            });
            Map<String, String> settings = rig.settings(RunningInbox.freePort());
            // 1 s instead of the default 15 s, so that the test waits for MetaKit's silence for one second
            settings.put("metakit.api.read-timeout-millis", "1000");
            RunningInbox inbox = rig.start(settings);

            HttpResponse<String> answer = rig.ops(inbox, "POST", "/webhook-secret/rotate");
            release.countDown();
            secrets.add(rig.sandbox.currentSecret());

            assertThat(answer.statusCode()).isEqualTo(502);
            assertThat(answer.body()).contains("MetaKit gave no usable answer to the rotation",
                    "it may have rotated; rotate again now");
            assertThat(rig.storedGeneration()).isEqualTo(1);
            // MetaKit did rotate: during its window its deliveries carry the old secret's signature too
            assertThat(rig.sandbox.currentSecret()).isNotEqualTo(RunningInbox.SECRET);
            assertThat(rig.postSignedWith(inbox, rig.sandbox.currentSecret(), RunningInbox.SECRET)).isEqualTo(200);

            HttpResponse<String> again = rig.ops(inbox, "POST", "/webhook-secret/rotate");
            secrets.add(rig.sandbox.currentSecret());
            assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
            assertThat(again.body()).contains("\"generation\":2", "\"saved\":true");
            assertThat(rig.postSignedWith(inbox, rig.sandbox.currentSecret())).isEqualTo(200);
        }
    }

    @Test
    void aRotationWhoseInstanceStoppedMidWayIsReportedAndTakenOverByTheNext() throws Exception {
        try (RotationRig rig = rig(Duration.ofMinutes(5))) {
            rig.storeFirstSecret();
            RunningInbox inbox = rig.start(rig.settings(RunningInbox.freePort()));
            // an instance took the claim three minutes ago and never came back
            TestDatabase.exec("insert into webhook_secret_rotations (webhook_id, state, trigger, claimed_by, claimed_at)"
                    + " values ('wh_1', 'calling', 'ops page', 'gone-host/0000', now() - interval '3 minutes')");

            await().atMost(Duration.ofSeconds(10)).until(() -> RotationRig.webhookSecrets(inbox).problem() != null);
            assertThat(RotationRig.webhookSecrets(inbox).problem()).contains("the rotation asked by ops page on"
                    + " gone-host/0000", "never ended: MetaKit may sign with a secret no instance stored; rotate again now");
            assertThat(Metrics.value(inbox.metrics(), "metakit_webhook_secret_rotation_stale")).isEqualTo(1.0);
            assertThat(rig.ops(inbox, "GET", "/webhook-secret").body()).contains("never ended");
            assertThat(logs.lines()).anyMatch(l -> l.startsWith("ERROR") && l.contains("gone-host/0000"));

            HttpResponse<String> answer = rig.ops(inbox, "POST", "/webhook-secret/rotate");
            secrets.add(rig.sandbox.currentSecret());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            assertThat(logs.lines()).anyMatch(l -> l.startsWith("WARN") && l.contains("taking over the claim gone-host/0000"));
            await().atMost(Duration.ofSeconds(10)).until(() -> RotationRig.webhookSecrets(inbox).problem() == null);
        }
    }

    @Test
    void ofTwoInstancesAskedAtOnceOneRotatesAndTheOtherIsToldWhoIs() throws Exception {
        try (RotationRig rig = rig(Duration.ofMinutes(5))) {
            rig.storeFirstSecret();
            CountDownLatch inMetaKit = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicBoolean first = new AtomicBoolean(true);
            // MetaKit holds its answer to the first rotation until the test has asked the other instance
            rig.sandbox.onRotation(r -> {
                if (first.getAndSet(false)) {
                    inMetaKit.countDown();
                    awaitLatch(release);
                }
            });
            RunningInbox a = rig.start(rig.settings(RunningInbox.freePort()));
            Map<String, String> scheduled = rig.settings(RunningInbox.freePort());
            scheduled.put("metakit.webhook.rotate-every", "PT1H");
            RunningInbox b = rig.start(scheduled);
            // the stored secret is two hours old: a rotation is due for B's schedule
            TestDatabase.exec("update webhook_secrets set stored_at = now() - interval '2 hours'");

            CompletableFuture<HttpResponse<String>> onA = CompletableFuture.supplyAsync(() -> {
                try {
                    return rig.ops(a, "POST", "/webhook-secret/rotate");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(inMetaKit.await(20, TimeUnit.SECONDS)).isTrue();
            HttpResponse<String> onB = rig.ops(b, "POST", "/webhook-secret/rotate");
            boolean scheduledOnB = RotationRig.webhookSecrets(b).rotateIfDue();
            release.countDown();

            assertThat(onB.statusCode()).isEqualTo(409);
            assertThat(onB.body()).contains("a rotation of webhook wh_1 is already in progress (asked by ops page on ",
                    "nothing was done");
            assertThat(scheduledOnB).as("the schedule leaves the period to the rotation in progress").isFalse();
            HttpResponse<String> answerA = onA.get(20, TimeUnit.SECONDS);
            assertThat(answerA.statusCode()).as(answerA.body()).isEqualTo(200);
            assertThat(answerA.body()).contains("\"generation\":2", "\"saved\":true");
            assertThat(RotationRig.webhookSecrets(b).rotateIfDue()).as("not due: rotated just now").isFalse();
            assertThat(rig.sandbox.apiCalls().count("rotate", 200)).isEqualTo(1);
            secrets.add(rig.sandbox.currentSecret());
            await().atMost(Duration.ofSeconds(5)).until(() ->
                    rig.postSignedWith(b, rig.sandbox.currentSecret()) == 200);
            assertThat(rig.postSignedWith(b, RunningInbox.SECRET)).isEqualTo(200);
        }
    }

    @Test
    void theDatabaseStoppingAfterMetaKitAnsweredLeavesTheNewSecretAcceptedAndStoredOnItsReturn() throws Exception {
        Path dataDir = Files.createTempDirectory("rotation-postgres-");
        try (StoppablePostgres postgres = new StoppablePostgres(dataDir);
             RotationRig rig = new RotationRig(NO_WEBHOOK, Duration.ofMinutes(5), 0, postgres::dataSource)) {
            secrets.add(rig.key);
            rig.storeFirstSecret();
            AtomicBoolean first = new AtomicBoolean(true);
            // the database stops while MetaKit rotates: MetaKit has the new secret, the store will fail
            rig.sandbox.onRotation(r -> {
                if (first.getAndSet(false)) {
                    try {
                        postgres.stop();
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            Map<String, String> settings = rig.settings(RunningInbox.freePort());
            settings.putAll(postgres.bundleSettings());
            RunningInbox inbox = rig.start(settings);

            HttpResponse<String> answer = rig.ops(inbox, "POST", "/webhook-secret/rotate");
            String newSecret = rig.sandbox.currentSecret();
            secrets.add(newSecret);

            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            assertThat(answer.body()).contains("\"rotated\":true", "\"saved\":false",
                    "MetaKit rotated the secret of webhook wh_1 but storing it failed",
                    "this instance accepts both secrets and keeps trying to store them");
            // verified with either secret, then 503 because the database is down: not a signature refusal (400)
            assertThat(rig.postSignedWith(inbox, newSecret)).isEqualTo(503);
            assertThat(rig.postSignedWith(inbox, RunningInbox.SECRET)).isEqualTo(503);
            assertThat(rig.postSignedWith(inbox, "whsec_neither")).isEqualTo(400);
            assertThat(RotationRig.webhookSecrets(inbox).problem()).contains("storing it failed");
            assertThat(inbox.management("/observe/health/ready?data=true").body())
                    .contains("\"name\":\"webhook-secret\",\"status\":\"DOWN\"", "storing it failed");

            assertThat(Metrics.value(inbox.metrics(), "metakit_webhook_secret_unsaved")).isEqualTo(1.0);

            postgres.start();
            await().atMost(Duration.ofSeconds(15)).until(() -> rig.storedGeneration() == 2);
            await().atMost(Duration.ofSeconds(5)).until(() -> RotationRig.webhookSecrets(inbox).problem() == null);
            assertThat(Metrics.value(inbox.metrics(), "metakit_webhook_secret_unsaved")).isZero();
            assertThat(rig.store().lastRotation("wh_1").orElseThrow().state()).isEqualTo("done");
            await().atMost(Duration.ofSeconds(15)).until(() -> rig.postSignedWith(inbox, newSecret) == 200);
            assertThat(rig.postSignedWith(inbox, RunningInbox.SECRET)).isEqualTo(200);
            // what was stored is what MetaKit signs with: another instance starting now takes it
            assertThat(SecretRotator.open(rig.store().read().orElseThrow(), SecretCipher.fromSetting(rig.key)).current())
                    .isEqualTo(newSecret);
        } finally {
            deleteTree(dataDir);
        }
    }

    @Test
    void aWrongKeyStopsStartupNamingTheSettingAndAMissingOneNamesBothWays() throws Exception {
        try (RotationRig rig = rig(Duration.ofMinutes(5))) {
            rig.storeFirstSecret();
            String otherKey = SecretCipherTest.newKey();
            secrets.add(otherKey);
            Map<String, String> wrong = rig.settings(RunningInbox.freePort());
            wrong.put("metakit.webhook.secret-key", otherKey);
            assertThatThrownBy(() -> rig.start(wrong)).satisfies(e -> assertThat(configurationError(e))
                    .startsWith("METAKIT_WEBHOOK_SECRET_KEY is not the key the stored webhook secret was encrypted with"));

            Map<String, String> none = rig.settings(RunningInbox.freePort());
            none.put("metakit.webhook.secret-key", "");
            assertThatThrownBy(() -> rig.start(none)).satisfies(e -> assertThat(configurationError(e))
                    .startsWith("METAKIT_WEBHOOK_SECRET is required").contains("METAKIT_WEBHOOK_SECRET_KEY"));
        }
    }

    @Test
    void aSecretStoredUnderAnotherKeyWhileRunningMakesReadinessDownAndKeepsTheSecretsInForce() throws Exception {
        try (RotationRig rig = rig(Duration.ofMinutes(5))) {
            rig.storeFirstSecret();
            RunningInbox inbox = rig.start(rig.settings(RunningInbox.freePort()));
            String otherKey = SecretCipherTest.newKey();
            secrets.add(otherKey);
            // an instance configured with another key stores a generation 2
            SecretCipher other = SecretCipher.fromSetting(otherKey);
            rig.store().save("wh_1", other.keyId(), new WebhookSecretStore.SealedPair(2,
                    other.encrypt("whsec_under_another_key", SecretRotator.context("wh_1", 2, "current")), null, null),
                    null);
            secrets.add("whsec_under_another_key");

            await().atMost(Duration.ofSeconds(5)).until(() -> inbox.healthStatus() == 503);
            assertThat(Metrics.value(inbox.metrics(), "metakit_webhook_secret_unreadable")).isEqualTo(1.0);
            assertThat(inbox.management("/observe/health/ready?data=true").body())
                    .contains("METAKIT_WEBHOOK_SECRET_KEY is not the key the stored webhook secret was encrypted with");
            assertThat(rig.postSignedWith(inbox, RunningInbox.SECRET)).isEqualTo(200);
            HttpResponse<String> refused = rig.ops(inbox, "POST", "/webhook-secret/rotate");
            assertThat(refused.statusCode()).isEqualTo(502);
            assertThat(refused.body()).contains("METAKIT_WEBHOOK_SECRET_KEY is not the key");
            assertThat(rig.sandbox.apiCalls().count("rotate", null)).as("MetaKit never asked").isZero();
        }
    }

    @Test
    void aSecretFromTheEnvironmentWinsAndARotationIsRefusedBeforeMetaKitIsAsked() throws Exception {
        try (RotationRig rig = rig(Duration.ofMinutes(5))) {
            rig.storeFirstSecret();
            Map<String, String> settings = rig.settings(RunningInbox.freePort());
            settings.put("metakit.webhook.secret", RunningInbox.SECRET);
            RunningInbox inbox = rig.start(settings);

            HttpResponse<String> refused = rig.ops(inbox, "POST", "/webhook-secret/rotate");

            assertThat(refused.statusCode()).isEqualTo(502);
            assertThat(refused.body()).contains("METAKIT_WEBHOOK_SECRET is set on this instance and wins over a stored"
                    + " secret, so a rotation would not reach it: nothing was rotated");
            assertThat(rig.ops(inbox, "GET", "/webhook-secret").body()).contains("\"source\":\"environment\"");
            assertThat(rig.sandbox.apiCalls().count("rotate", null)).isZero();

            Map<String, String> scheduled = rig.settings(RunningInbox.freePort());
            scheduled.put("metakit.webhook.secret", RunningInbox.SECRET);
            scheduled.put("metakit.webhook.rotate-every", "P30D");
            assertThatThrownBy(() -> rig.start(scheduled)).satisfies(e -> assertThat(configurationError(e))
                    .startsWith("METAKIT_WEBHOOK_ROTATE_EVERY rotates the stored secret, but METAKIT_WEBHOOK_SECRET is set"));
        }
    }

    private static String configurationError(Throwable e) {
        Throwable t = e;
        while (t != null && !(t instanceof ConfigurationException)) {
            t = t.getCause();
        }
        assertThat(t).as("a ConfigurationException in the causes of %s", e).isNotNull();
        return t.getMessage();
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
