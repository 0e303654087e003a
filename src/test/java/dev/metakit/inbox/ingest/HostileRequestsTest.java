package dev.metakit.inbox.ingest;

import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RawHttp;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The public endpoint under requests an attacker would send, each over a plain socket, with the default settings. */
class HostileRequestsTest {
    private static final String HOOK = "/hooks/metakit";
    private static RunningInbox inbox;

    @BeforeAll
    static void startBundle() {
        inbox = RunningInbox.start(Map.of("camel.main.routes-include-pattern",
                RunningInbox.onlyRoutes("beans", "ingest")));
    }

    @AfterAll
    static void stopBundle() {
        inbox.close();
    }

    @BeforeEach
    void emptyInbox() {
        TestDatabase.truncateAll();
    }

    private static byte[] body(long ticket) {
        return ("{\"event\":\"position.opened\",\"account_id\":2,\"data\":{\"ticket\":" + ticket + "}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static long now() {
        return System.currentTimeMillis() / 1000;
    }

    private static RawHttp.Answer post(String target, byte[] body, String... headerLines) throws Exception {
        String[] lines = new String[headerLines.length + 1];
        System.arraycopy(headerLines, 0, lines, 0, headerLines.length);
        lines[headerLines.length] = "Content-Length: " + body.length;
        try (RawHttp http = new RawHttp(inbox.httpPort())) {
            return http.send(RawHttp.head(target, lines)).send(body).read();
        }
    }

    @Test
    void everyLetterCaseOfOneDeliverysV1IsOneRow() throws Exception {
        byte[] body = body(1);
        long t = now();
        String v1 = TestSignatures.v1(RunningInbox.SECRET, t, body);
        String[] variants = {v1, v1.toUpperCase(), v1.substring(0, 10).toUpperCase() + v1.substring(10),
                v1.substring(0, 63) + v1.substring(63).toUpperCase()};

        StringBuilder answers = new StringBuilder();
        for (String variant : variants) {
            RawHttp.Answer a = post(HOOK, body, "X-MetaKit-Signature: t=" + t + ",v1=" + variant);
            assertThat(a.status()).isEqualTo(200);
            answers.append(a.body()).append(' ');
        }

        assertThat(answers.toString().trim()).isEqualTo("stored duplicate duplicate duplicate");
        assertThat(IngestRouteTest.countRows()).isEqualTo(1);
        assertThat(IngestRouteTest.row(t + ":" + v1)).as("keyed on the lower-case digest").isNotNull();
    }

    @Test
    void aSignatureInTheQueryStringIsNotASignature() throws Exception {
        byte[] body = body(2);
        String signature = TestSignatures.header(RunningInbox.SECRET, now(), body);

        RawHttp.Answer a = post(HOOK + "?X-MetaKit-Signature=" + signature.replace(",", "%2C"), body);

        assertThat(a.status()).isEqualTo(400);
        assertThat(a.body()).isEqualTo("missing signature header");
        assertThat(IngestRouteTest.countRows()).isZero();
    }

    @Test
    void anEventInTheQueryStringIsIgnoredBesideTheRealHeader() throws Exception {
        byte[] body = body(3);
        long t = now();

        RawHttp.Answer a = post(HOOK + "?X-MetaKit-Event=evil.qs&x-metakit-event=evil.lower", body,
                "X-MetaKit-Signature: " + TestSignatures.header(RunningInbox.SECRET, t, body),
                "X-MetaKit-Event: position.opened");

        assertThat(a.status()).isEqualTo(200);
        assertThat(IngestRouteTest.row(t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, body)).event())
                .isEqualTo("position.opened");
    }

    @Test
    void aRepeatedEventOrSignatureHeaderIs400() throws Exception {
        byte[] body = body(4);
        String signature = "X-MetaKit-Signature: " + TestSignatures.header(RunningInbox.SECRET, now(), body);

        RawHttp.Answer twoEvents = post(HOOK, body, signature, "X-MetaKit-Event: position.opened",
                "x-metakit-event: evil.second");
        RawHttp.Answer twoSignatures = post(HOOK, body, signature, signature.toLowerCase().replace("x-metakit", "X-METAKIT"));

        assertThat(twoEvents.status()).isEqualTo(400);
        assertThat(twoEvents.body()).isEqualTo("repeated signature or event header");
        assertThat(twoSignatures.status()).isEqualTo(400);
        assertThat(IngestRouteTest.countRows()).isZero();
        assertThat(inbox.metrics()).containsPattern(
                "metakit_webhook_rejected_total\\{[^}]*reason=\"repeated_header\"[^}]*} [2-9]");
    }

    @Test
    void contentLengthBesideChunkedIsAnsweredAndTheConnectionClosed() throws Exception {
        byte[] body = body(5);
        String signature = "X-MetaKit-Signature: " + TestSignatures.header(RunningInbox.SECRET, now(), body);
        try (RawHttp http = new RawHttp(inbox.httpPort())) {
            http.send(RawHttp.head(HOOK, signature, "Content-Length: 4", "Transfer-Encoding: chunked"));
            http.send(Integer.toHexString(body.length) + "\r\n").send(body).send("\r\n0\r\n\r\n");

            RawHttp.Answer a = http.read();

            assertThat(a.status()).isEqualTo(400);
            assertThat(http.closedWithin(Duration.ofSeconds(3))).as("closed after the answer (RFC 9112 6.1)").isTrue();
        }
        assertThat(IngestRouteTest.countRows()).isZero();
    }

    @Test
    void aClientHangingUpMidBodyWritesNoErrorLineAndIsCounted() throws Exception {
        byte[] body = body(6);
        String signature = "X-MetaKit-Signature: " + TestSignatures.header(RunningInbox.SECRET, now(), body);
        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR)) {
            for (int i = 0; i < 5; i++) {
                try (RawHttp http = new RawHttp(inbox.httpPort())) {
                    http.send(RawHttp.head(HOOK, signature, "Content-Length: 100000")).send(body);
                }
            }

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(inbox.metrics()).containsPattern(
                    "metakit_webhook_rejected_total\\{[^}]*reason=\"client_closed\"[^}]*} [5-9]"));
            assertThat(errors.lines()).isEmpty();
        }
        assertThat(IngestRouteTest.countRows()).isZero();
    }
}
