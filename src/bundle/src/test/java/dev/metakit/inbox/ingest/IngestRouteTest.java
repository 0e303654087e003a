package dev.metakit.inbox.ingest;

import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SharedInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/** The ingest route over real HTTP, on a real PostgreSQL. */
class IngestRouteTest {
    // the ingest side alone: no worker touches the rows these tests inspect
    @RegisterExtension
    static final SharedInbox shared = SharedInbox.with(Map.of(
            "metakit.webhook.secret-previous", RunningInbox.PREVIOUS_SECRET,
            "camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "ingest")));

    private static byte[] body(String event, long accountId, long ticket) {
        return ("{\"event\":\"" + event + "\",\"account_id\":" + accountId
                + ",\"created_at\":\"2026-12-02T10:15:30Z\",\"data\":{\"ticket\":" + ticket
                + ",\"symbol\":\"EURUSD\",\"type\":\"buy\",\"volume\":0.10,\"price_open\":1.08450,\"sl\":0,\"tp\":0}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static long now() {
        return System.currentTimeMillis() / 1000;
    }

    @Test
    void aSignedDeliveryIsStoredWithItsKeyEventAndAccountBeforeThe2xx() throws Exception {
        byte[] body = body("position.opened", 2, 99302156);
        long t = now();
        String header = TestSignatures.header(RunningInbox.SECRET, t, body);

        HttpResponse<String> response = inbox().post(body, header, "position.opened");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("stored");
        assertThat(response.headers().firstValue("X-MetaKit-Signature")).isEmpty();
        Row row = row(t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, body));
        assertThat(row).isNotNull();
        assertThat(row.event()).isEqualTo("position.opened");
        assertThat(row.accountId()).isEqualTo(2L);
        assertThat(row.body()).isEqualTo(new String(body, StandardCharsets.UTF_8));
        assertThat(row.processedAt()).isNull();
    }

    @Test
    void aRetryOfTheSameDeliveryIsAcknowledgedAndChangesNothing() throws Exception {
        byte[] body = body("position.closed", 2, 1);
        String header = TestSignatures.header(RunningInbox.SECRET, now(), body);

        assertThat(inbox().post(body, header, "position.closed").body()).isEqualTo("stored");
        HttpResponse<String> retry = inbox().post(body, header, "position.closed");

        assertThat(retry.statusCode()).isEqualTo(200);
        assertThat(retry.body()).isEqualTo("duplicate");
        assertThat(countRows()).isEqualTo(1);
    }

    @Test
    void twentyConcurrentCopiesOfOneDeliveryAllGet2xxAndLeaveExactlyOneRow() throws Exception {
        byte[] body = body("position.opened", 3, 7);
        String header = TestSignatures.header(RunningInbox.SECRET, now(), body);
        ExecutorService pool = Executors.newFixedThreadPool(20);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> results = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Callable<Integer> send = () -> {
                go.await();
                return inbox().post(body, header, "position.opened").statusCode();
            };
            results.add(pool.submit(send));
        }
        go.countDown();
        for (Future<Integer> r : results) {
            assertThat(r.get()).isEqualTo(200);
        }
        pool.shutdown();
        assertThat(countRows()).isEqualTo(1);
    }

    @Test
    void aTamperedBodyIsRejectedWith400AndNothingIsStored() throws Exception {
        byte[] body = body("position.opened", 2, 5);
        String header = TestSignatures.header(RunningInbox.SECRET, now(), body);
        byte[] tampered = body("position.opened", 3, 5);

        HttpResponse<String> response = inbox().post(tampered, header, "position.opened");

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).isEqualTo("signature mismatch");
        assertThat(countRows()).isZero();
    }

    @Test
    void theAnswerCarriesNoneOfTheRequestsHeaders() throws Exception {
        byte[] body = body("position.opened", 2, 99302157);
        String header = TestSignatures.header(RunningInbox.SECRET, now(), body);

        HttpResponse<String> stored = inbox().post(body, header, "position.opened", Map.of("X-Trace-Token", "t-1"));
        HttpResponse<String> rejected = inbox().post(body, "t=abc,v1=00", "position.opened",
                Map.of("X-Trace-Token", "t-2"));

        for (HttpResponse<String> answer : List.of(stored, rejected)) {
            assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v)
                    .startsWith("text/plain"));
            assertThat(answer.headers().map().keySet()).as("status %d", answer.statusCode())
                    .noneMatch(name -> name.equalsIgnoreCase("X-Trace-Token")
                            || name.equalsIgnoreCase("X-MetaKit-Signature") || name.equalsIgnoreCase("X-MetaKit-Event")
                            || name.regionMatches(true, 0, "Camel", 0, 5));
        }
        assertThat(stored.statusCode()).isEqualTo(200);
        assertThat(rejected.statusCode()).isEqualTo(400);
    }

    @Test
    void aMissingOrMalformedOrStaleSignatureGets400WithItsReason() throws Exception {
        byte[] body = body("position.opened", 2, 5);
        assertThat(inbox().post(body, null, null).body()).isEqualTo("missing signature header");
        assertThat(inbox().post(body, "t=abc,v1=00", null).body()).isEqualTo("malformed signature header");
        HttpResponse<String> stale = inbox().post(body,
                TestSignatures.header(RunningInbox.SECRET, now() - 301, body), null);
        assertThat(stale.statusCode()).isEqualTo(400);
        assertThat(stale.body()).isEqualTo("timestamp outside tolerance");
        HttpResponse<String> future = inbox().post(body,
                TestSignatures.header(RunningInbox.SECRET, now() + 400, body), null);
        assertThat(future.body()).isEqualTo("timestamp outside tolerance");
        assertThat(countRows()).isZero();
        assertThat(inbox().metrics())
                .containsPattern("metakit_webhook_rejected_total\\{[^}]*reason=\"missing_header\"[^}]*} [1-9]")
                .containsPattern("metakit_webhook_rejected_total\\{[^}]*reason=\"timestamp_outside_tolerance\"[^}]*} [2-9]");
    }

    @Test
    void aDeliverySignedWithThePreviousSecretIsAcceptedDuringRotation() throws Exception {
        byte[] body = body("position.modified", 2, 5);
        long t = now();
        HttpResponse<String> previousOnly = inbox().post(body,
                TestSignatures.header(RunningInbox.PREVIOUS_SECRET, t, body), "position.modified");
        assertThat(previousOnly.statusCode()).isEqualTo(200);

        byte[] other = body("position.modified", 2, 6);
        String both = TestSignatures.header("not-our-secret", RunningInbox.SECRET, t, other);
        assertThat(inbox().post(other, both, "position.modified").statusCode()).isEqualTo(200);
        assertThat(row(t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, other)))
                .as("the key uses the v1 that verified").isNotNull();
    }

    @Test
    void aGenuineBodyThatIsNotJsonIsStoredForTheWorkerToFlag() throws Exception {
        byte[] body = "this is not json".getBytes(StandardCharsets.UTF_8);
        HttpResponse<String> response = inbox().postSigned(body, "position.opened");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(countRows()).isEqualTo(1);
    }

    @Test
    void aBodyThatIsNotValidUtf8IsKeptByteForByte() throws Exception {
        byte[] body = {'{', '"', 'x', '"', ':', '"', (byte) 0xC3, (byte) 0x28, 0, '"', '}'};
        long t = now();
        assertThat(inbox().post(body, TestSignatures.header(RunningInbox.SECRET, t, body), "x.y").statusCode())
                .isEqualTo(200);
        try (Connection c = TestDatabase.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("select body, body_raw from webhook_inbox")) {
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isNull();
                assertThat(rs.getBytes(2)).isEqualTo(body);
            }
        }
    }

    @Test
    void unknownAndNonTradeEventsAreStoredAndAcknowledged() throws Exception {
        assertThat(inbox().postSigned(body("account.connected", 4, 0), "account.connected").statusCode()).isEqualTo(200);
        assertThat(inbox().postSigned(body("something.new", 4, 0), "something.new").statusCode()).isEqualTo(200);
        assertThat(countRows()).isEqualTo(2);
    }

    @Test
    void aBodyOverTheLimitGets413WithContentLengthOrChunked() throws Exception {
        byte[] big = new byte[1024 * 1024 + 1];
        java.util.Arrays.fill(big, (byte) 'a');
        assertThat(inbox().post(big, TestSignatures.header(RunningInbox.SECRET, now(), big), null).statusCode())
                .isEqualTo(413);
        assertThat(chunkedPostStatus(3 * 1024 * 1024)).isEqualTo(413);
        assertThat(countRows()).isZero();
    }

    @Test
    void healthIsUpWhileTheDatabaseAnswers() {
        assertThat(inbox().healthStatus()).isEqualTo(200);
    }

    private static int chunkedPostStatus(int totalBytes) throws Exception {
        try (Socket s = new Socket("127.0.0.1", inbox().httpPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /hooks/metakit HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
                    + "X-MetaKit-Signature: t=1,v1=00\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[64 * 1024];
            java.util.Arrays.fill(chunk, (byte) 'a');
            try {
                for (int sent = 0; sent < totalBytes; sent += chunk.length) {
                    out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(chunk);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (java.io.IOException closedEarly) {
                // the server may answer and close before the whole body is sent
            }
            InputStream in = s.getInputStream();
            String statusLine = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
            return Integer.parseInt(statusLine.substring(9, 12));
        }
    }

    record Row(String event, Long accountId, String body, java.sql.Timestamp processedAt) {
    }

    static Row row(String key) {
        return TestDatabase.rows("select event, account_id, body, processed_at from webhook_inbox where delivery_key = ?",
                key).stream().findFirst().map(r -> new Row((String) r.get("event"), (Long) r.get("account_id"),
                (String) r.get("body"), (java.sql.Timestamp) r.get("processed_at"))).orElse(null);
    }

    static int countRows() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection();
             ResultSet rs = c.createStatement().executeQuery("select count(*) from webhook_inbox")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static RunningInbox inbox() {
        return shared.inbox();
    }
}
