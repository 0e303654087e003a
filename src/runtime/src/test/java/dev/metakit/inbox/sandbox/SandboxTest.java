package dev.metakit.inbox.sandbox;

import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class SandboxTest {
    private TestReceiver receiver;
    private Sandbox sandbox;

    @AfterEach
    void tearDown() {
        // closed in reverse: the sandbox, then its receiver (a null one is skipped)
        try (TestReceiver r = receiver; Sandbox s = sandbox) {
            // closing is all
        }
    }

    private SandboxSettings.Builder settings() {
        return SandboxSettings.builder().webhookUrl(receiver.url()).webhookSecret("whsec_facade")
                .operationsPerSecond(0).deliverySchedule(TestReceiver.FAST);
    }

    @Test
    void under_duplicates_loss_and_reordering_the_consumer_sees_exactly_the_sent_keys() throws Exception {
        receiver = TestReceiver.always(200);
        sandbox = new Sandbox(settings().faults(SandboxFaults.none().withDuplicateProbability(0.3)
                .withLostProbability(0.2).withMaxFirstAttemptDelay(Duration.ofMillis(200))).build());

        sandbox.runOperations(60);

        assertThat(sandbox.awaitDeliveriesSettled(Duration.ofSeconds(10))).isTrue();
        Set<String> receivedKeys = new HashSet<>();
        receiver.received().forEach(r -> {
            receivedKeys.addAll(r.keys());
            assertThat(r.signature()).isEqualTo(TestSignatures.header("whsec_facade", r.t(), r.body()));
        });
        DeliveryLog log = sandbox.deliveries();
        assertThat(receivedKeys).isEqualTo(log.sentKeys()).isEqualTo(log.acknowledgedKeys());
        assertThat(log.lostKeys()).isNotEmpty().doesNotContainAnyElementsOf(receivedKeys);
        assertThat(log.stats().duplicated()).isPositive();
        assertThat(receiver.received()).hasSize((int) log.attempts().size());
        assertThat(sandbox.truth().operations()).isEqualTo(60);
        assertThat(sandbox.webhook().lastDeliveryStatus()).isEqualTo("succeeded");
        assertThat(sandbox.progressLine()).contains("60 operations", "lost");
    }

    @Test
    void the_rotation_fault_rotates_once_mid_traffic_and_signs_with_both_secrets_during_the_window() throws Exception {
        receiver = TestReceiver.always(200);
        sandbox = new Sandbox(settings().faults(SandboxFaults.none().withRotation(5, Duration.ofMinutes(1))).build());
        Set<SecretRotation> rotations = new HashSet<>();
        sandbox.onRotation(rotations::add);

        sandbox.runOperations(10);

        assertThat(sandbox.awaitDeliveriesSettled(Duration.ofSeconds(5))).isTrue();
        assertThat(rotations).singleElement().satisfies(r -> {
            assertThat(r.previousSecret()).isEqualTo("whsec_facade");
            assertThat(r.secret()).isEqualTo(sandbox.currentSecret());
        });
        assertThat(sandbox.previousSecret()).isEqualTo("whsec_facade");
        assertThat(sandbox.deliveries().deliveries()).extracting(d -> d.v1s().size())
                .containsExactly(1, 1, 1, 1, 1, 2, 2, 2, 2, 2);
    }

    @Test
    void the_traffic_generator_performs_exactly_the_bounded_count_at_its_rate() throws Exception {
        receiver = TestReceiver.always(200);
        sandbox = new Sandbox(settings().faults(SandboxFaults.none()).operationsPerSecond(100).operations(20).build());

        sandbox.start();

        await().atMost(Duration.ofSeconds(5)).until(sandbox::trafficDone);
        assertThat(sandbox.quiesce(Duration.ofSeconds(5))).isTrue();
        assertThat(sandbox.truth().operations()).isEqualTo(20);
        assertThat(receiver.received()).hasSize(20);
    }

    @Test
    void the_api_serves_the_sandbox_truth_with_the_configured_key() throws Exception {
        receiver = TestReceiver.always(200);
        sandbox = new Sandbox(settings().faults(SandboxFaults.none()).apiKey("k-123").build());
        sandbox.runOperations(30);

        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(sandbox.apiBaseUrl() + "/v1/accounts/1/positions"))
                        .header("Authorization", "Bearer k-123").build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        Set<Long> tickets = new HashSet<>();
        SandboxJson.mapper().readTree(response.body()).forEach(p -> tickets.add(p.get("ticket").asLong()));
        assertThat(tickets).isEqualTo(sandbox.truth().openPositions(1).keySet());
        assertThat(sandbox.apiPort()).isPositive();
        assertThat(sandbox.apiCalls().count("positions", 200)).isEqualTo(1);
    }

    @Test
    void one_seed_replays_the_same_deliveries_and_faults() throws IOException, InterruptedException {
        receiver = TestReceiver.always(200);
        SandboxFaults faults = SandboxFaults.none().withLostProbability(0.3).withDuplicateProbability(0.3);
        String first;
        try (Sandbox a = new Sandbox(settings().faults(faults).build())) {
            a.runOperations(40);
            a.awaitDeliveriesSettled(Duration.ofSeconds(5));
            first = a.deliveries().deliveries().stream()
                    .map(d -> d.event().event() + d.event().data() + d.lost() + d.duplicated()).toList().toString();
        }
        try (Sandbox b = new Sandbox(settings().faults(faults).build())) {
            b.runOperations(40);
            b.awaitDeliveriesSettled(Duration.ofSeconds(5));
            assertThat(b.deliveries().deliveries().stream()
                    .map(d -> d.event().event() + d.event().data() + d.lost() + d.duplicated()).toList().toString())
                    .isEqualTo(first);
        }
    }
}
