package dev.metakit.inbox.sandbox;

import dev.metakit.inbox.support.MutableClock;
import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class WebhookSenderTest {
    private static final String SECRET = "whsec_test_current";
    private TestReceiver receiver;
    private WebhookSender sender;

    @AfterEach
    void tearDown() {
        if (sender != null) {
            sender.close();
        }
        if (receiver != null) {
            receiver.close();
        }
    }

    private WebhookEndpoint start(TestReceiver r, DeliverySchedule schedule, SandboxFaults faults, Clock clock) {
        receiver = r;
        WebhookEndpoints endpoints = new WebhookEndpoints(7, clock, Duration.ofMinutes(5));
        WebhookEndpoint endpoint = endpoints.add(r.url(), SECRET);
        sender = new WebhookSender(endpoints, schedule, faults, 7, clock);
        return endpoint;
    }

    private static SandboxEvent opened(long ticket) {
        return SandboxCli.singleEvent(SandboxEvent.POSITION_OPENED, 2, ticket, Instant.now());
    }

    @Test
    void signsLikeAVectorComputedOutsideTheJvm() {
        // the one signer the tests use: anchored to the same openssl/python vector as SignatureVerifierTest
        byte[] body = "{\"event\":\"webhook.test\",\"account_id\":2}".getBytes(StandardCharsets.US_ASCII);
        String expected = "ee329c2a5af05db39af3a0384d6fe379622087a522dda91d3ed5c57e8e31d087";

        assertThat(WebhookSender.sign("mk_known_vector_secret", 1764670530L, body)).isEqualTo(expected);
        assertThat(WebhookSender.signatureHeader(1764670530L, List.of(expected, "ab")))
                .isEqualTo("t=1764670530,v1=" + expected + ",v1=ab");
    }

    @Test
    void a_receiver_that_always_fails_gets_five_byte_identical_attempts_at_the_contract_delays_then_the_endpoint_is_failed()
            throws IOException {
        WebhookEndpoint endpoint = start(TestReceiver.always(500), DeliverySchedule.contract(), SandboxFaults.none(),
                Clock.systemUTC());

        sender.send(opened(99302156));

        await().atMost(Duration.ofSeconds(15)).until(() -> sender.inFlight() == 0);
        List<TestReceiver.Received> got = receiver.received();
        assertThat(got).hasSize(5);
        long[] expectedGapsMillis = {500, 1000, 2000, 4000};
        for (int i = 1; i < got.size(); i++) {
            long gapMillis = (got.get(i).arrivedNanos() - got.get(i - 1).arrivedNanos()) / 1_000_000;
            // at its step of the doubling, not before, and short of half way to the next one: how late within that
            // is a loaded machine's scheduling
            assertThat(gapMillis).as("gap before attempt %d", i + 1)
                    .isBetween(expectedGapsMillis[i - 1] - 50, expectedGapsMillis[i - 1] * 3 / 2);
        }
        for (TestReceiver.Received r : got) {
            assertThat(r.body()).isEqualTo(got.get(0).body());
            assertThat(r.signature()).isEqualTo(got.get(0).signature());
            assertThat(r.event()).isEqualTo(SandboxEvent.POSITION_OPENED);
            assertThat(r.contentType()).isEqualTo("application/json");
        }
        assertThat(endpoint.lastDeliveryStatus()).isEqualTo("failed");
        assertThat(endpoint.lastDeliveryAt()).isNotNull();
        Delivery delivery = sender.log().deliveries().get(0);
        assertThat(delivery.outcome()).isEqualTo(Delivery.Outcome.FAILED);
        assertThat(delivery.attempts()).extracting(DeliveryAttempt::status).containsOnly(500);
        assertThat(sender.log().sentKeys()).containsExactly(delivery.key());
        assertThat(sender.log().acknowledgedKeys()).isEmpty();
    }

    @Test
    void a_receiver_that_fails_twice_then_answers_200_gets_three_attempts_and_the_endpoint_is_succeeded()
            throws IOException {
        WebhookEndpoint endpoint = start(new TestReceiver(i -> i < 2 ? 503 : 200), TestReceiver.FAST, SandboxFaults.none(),
                Clock.systemUTC());

        sender.send(opened(1));

        await().atMost(Duration.ofSeconds(5)).until(() -> sender.inFlight() == 0);
        assertThat(receiver.received()).hasSize(3);
        assertThat(sender.log().attempts()).extracting(DeliveryAttempt::status).containsExactly(503, 503, 200);
        assertThat(sender.log().attempts()).noneMatch(DeliveryAttempt::timedOut);
        assertThat(endpoint.lastDeliveryStatus()).isEqualTo("succeeded");
        assertThat(sender.log().acknowledgedKeys()).containsExactly(sender.log().deliveries().get(0).key());
    }

    @Test
    void a_receiver_that_hangs_past_the_request_timeout_counts_as_a_failed_attempt() throws IOException {
        WebhookEndpoint endpoint = start(TestReceiver.always(TestReceiver.HANG),
                TestReceiver.FAST.withRequestTimeout(Duration.ofMillis(200)), SandboxFaults.none(), Clock.systemUTC());

        sender.send(opened(1));

        await().atMost(Duration.ofSeconds(5)).until(() -> sender.inFlight() == 0);
        assertThat(receiver.received()).hasSize(5);
        assertThat(sender.log().attempts()).allSatisfy(a -> {
            assertThat(a.status()).isZero();
            assertThat(a.error()).contains("Timeout");
            assertThat(a.timedOut()).isTrue();
        });
        assertThat(endpoint.lastDeliveryStatus()).isEqualTo("failed");
    }

    @Test
    void the_contract_schedule_is_five_attempts_half_a_second_to_four_seconds_apart_with_five_second_timeouts() {
        DeliverySchedule contract = DeliverySchedule.contract();

        assertThat(contract.maxAttempts()).isEqualTo(5);
        assertThat(contract.delays()).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1),
                Duration.ofSeconds(2), Duration.ofSeconds(4));
        assertThat(contract.requestTimeout()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void the_signature_verifies_with_an_independent_hmac_over_t_and_the_raw_body() throws IOException {
        start(TestReceiver.always(200), TestReceiver.FAST, SandboxFaults.none(), Clock.systemUTC());
        long before = Instant.now().getEpochSecond();

        sender.send(opened(42));

        await().atMost(Duration.ofSeconds(5)).until(() -> receiver.received().size() == 1);
        TestReceiver.Received r = receiver.received().get(0);
        assertThat(r.t()).isBetween(before, Instant.now().getEpochSecond());
        assertThat(r.signature()).isEqualTo(TestSignatures.header(SECRET, r.t(), r.body()));
        assertThat(r.bodyText()).contains("\"event\":\"position.opened\"", "\"account_id\":2",
                "\"volume\":0.10", "\"price_open\":1.08450", "\"sl\":0");
    }

    @Test
    void during_a_rotation_window_the_header_carries_a_v1_for_each_secret_and_after_it_only_the_new_one()
            throws IOException {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:15:30Z"));
        receiver = TestReceiver.always(200);
        WebhookEndpoints endpoints = new WebhookEndpoints(7, clock, Duration.ofMinutes(2));
        WebhookEndpoint endpoint = endpoints.add(receiver.url(), SECRET);
        sender = new WebhookSender(endpoints, TestReceiver.FAST, SandboxFaults.none(), 7, clock);

        SecretRotation rotation = endpoints.rotate(endpoint.id());
        sender.send(opened(1));
        await().atMost(Duration.ofSeconds(5)).until(() -> receiver.received().size() == 1);
        clock.advance(Duration.ofMinutes(3));
        sender.send(opened(2));
        await().atMost(Duration.ofSeconds(5)).until(() -> receiver.received().size() == 2);

        assertThat(rotation.previousSecret()).isEqualTo(SECRET);
        assertThat(rotation.secret()).isNotEqualTo(SECRET).isEqualTo(endpoint.currentSecret());
        TestReceiver.Received during = receiver.received().get(0);
        assertThat(during.v1s()).containsExactly(TestSignatures.v1(rotation.secret(), during.t(), during.body()),
                TestSignatures.v1(SECRET, during.t(), during.body()));
        assertThat(during.signature()).isEqualTo(
                TestSignatures.header(rotation.secret(), SECRET, during.t(), during.body()));
        TestReceiver.Received after = receiver.received().get(1);
        assertThat(after.signature()).isEqualTo(TestSignatures.header(rotation.secret(), after.t(), after.body()));
        assertThat(sender.log().deliveries().get(0).keys()).hasSize(2);
    }

    @Test
    void a_duplicated_event_arrives_twice_with_the_same_signed_bytes() throws IOException {
        start(TestReceiver.always(200), TestReceiver.FAST, SandboxFaults.none().withDuplicateProbability(1), Clock.systemUTC());

        sender.send(opened(1));

        await().atMost(Duration.ofSeconds(5)).until(() -> sender.inFlight() == 0);
        List<TestReceiver.Received> got = receiver.received();
        assertThat(got).hasSize(2);
        assertThat(got.get(1).body()).isEqualTo(got.get(0).body());
        assertThat(got.get(1).signature()).isEqualTo(got.get(0).signature());
        assertThat(sender.log().stats().duplicated()).isEqualTo(1);
    }

    @Test
    void a_lost_event_is_never_sent_but_is_recorded_as_lost() throws IOException {
        WebhookEndpoint endpoint = start(TestReceiver.always(200), TestReceiver.FAST,
                SandboxFaults.none().withLostProbability(1), Clock.systemUTC());

        sender.send(opened(1));

        assertThat(sender.inFlight()).isZero();
        assertThat(receiver.received()).isEmpty();
        assertThat(sender.log().sentKeys()).isEmpty();
        assertThat(sender.log().lostKeys()).containsExactly(sender.log().deliveries().get(0).key());
        assertThat(endpoint.lastDeliveryStatus()).isNull();
    }

    @Test
    void each_event_has_its_own_schedule_so_a_failing_event_does_not_hold_back_the_next() throws IOException {
        AtomicInteger seen = new AtomicInteger();
        start(new TestReceiver(i -> seen.incrementAndGet() == 1 ? 500 : 200), DeliverySchedule.contract(),
                SandboxFaults.none(), Clock.systemUTC());

        sender.send(opened(1));
        await().atMost(Duration.ofSeconds(2)).until(() -> receiver.received().size() == 1);
        sender.send(opened(2));

        await().atMost(Duration.ofMillis(400)).until(() -> receiver.received().size() == 2);
        assertThat(receiver.received().get(1).bodyText()).contains("\"ticket\":2");
        await().atMost(Duration.ofSeconds(3)).until(() -> sender.inFlight() == 0);
        assertThat(receiver.received().get(2).bodyText()).contains("\"ticket\":1");
    }

    @Test
    void a_body_with_exact_decimals_is_written_plain() {
        SandboxEvent event = new SandboxEvent("position.modified", 1, Instant.parse("2026-12-02T10:15:30Z"),
                java.util.Map.of("volume", new BigDecimal("1E-1")));

        assertThat(new String(event.toBytes())).isEqualTo(
                "{\"event\":\"position.modified\",\"account_id\":1,\"created_at\":\"2026-12-02T10:15:30Z\","
                        + "\"data\":{\"volume\":0.1}}");
    }
}
