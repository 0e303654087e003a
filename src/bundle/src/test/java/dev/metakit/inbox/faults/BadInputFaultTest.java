package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzed requests at volume (seeded, so a failure replays), interleaved with genuine deliveries and their replays:
 * no 5xx, nothing stored but the genuine deliveries, and every genuine one answered 200.
 */
class BadInputFaultTest {
    private static final long SEED = 20261202L;
    private static final int MAX_BODY = 1_048_576;
    private RunningInbox inbox;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    /** One request: its kind, the bytes, the signature header (null: none); valid ones carry their delivery key. */
    private record Spec(String kind, byte[] body, int oversize, String header, String key) {
        boolean valid() {
            return key != null;
        }
    }

    @BeforeEach
    void start() {
        TestDatabase.truncateAll();
        inbox = RunningInbox.start(Map.of(
                "camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "ingest")));
    }

    @AfterEach
    void stop() {
        inbox.close();
    }

    @Test
    void twoThousandFuzzedRequestsAmongGenuineOnesStoreNoForgeryAndNeverAnswer5xx() throws Exception {
        fuzz(2_000);
    }

    @Test
    @Tag("fault-long")
    void tenThousandFuzzedRequestsAmongGenuineOnesStoreNoForgeryAndNeverAnswer5xx() throws Exception {
        fuzz(10_000);
    }

    private void fuzz(int count) throws Exception {
        Random random = new Random(SEED);
        List<Spec> specs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            specs.add(spec(random, i, specs));
        }
        ExecutorService clients = Executors.newFixedThreadPool(16);
        List<Future<Integer>> answers = new ArrayList<>(count);
        long started = System.nanoTime();
        for (Spec spec : specs) {
            answers.add(clients.submit(() -> send(spec)));
        }
        Map<String, Map<Integer, Integer>> byKind = new TreeMap<>();
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Spec spec = specs.get(i);
            int status = answers.get(i).get();
            byKind.computeIfAbsent(spec.kind(), k -> new TreeMap<>()).merge(status, 1, Integer::sum);
            boolean ok = spec.valid() ? status == 200 : status >= 400 && status < 500;
            if (!ok) {
                wrong.add(spec.kind() + " #" + i + " -> " + status + " header=" + spec.header());
            }
        }
        long millis = Duration.ofNanos(System.nanoTime() - started).toMillis();
        clients.shutdown();

        Set<String> validKeys = new HashSet<>();
        specs.stream().filter(Spec::valid).forEach(s -> validKeys.add(s.key()));
        Set<String> stored = TestDatabase.strings(TestDatabase.dataSource(), "select delivery_key from webhook_inbox");
        System.out.printf("FAULT bad-input %d requests in %d ms (%.0f req/s), 16 clients: genuine keys=%d stored=%d; "
                + "answers by kind %s%n", count, millis, count * 1000.0 / millis, validKeys.size(), stored.size(),
                byKind);

        assertThat(wrong).as("genuine answered 200, everything else 4xx (never 5xx)").isEmpty();
        assertThat(stored).as("exactly the genuine deliveries are in the inbox").isEqualTo(validKeys);
    }

    private Spec spec(Random r, int i, List<Spec> earlier) {
        long now = System.currentTimeMillis() / 1000;
        byte[] body = ("{\"event\":\"position.modified\",\"account_id\":" + (1 + r.nextInt(50))
                + ",\"data\":{\"ticket\":" + r.nextInt(1_000_000) + ",\"i\":" + i + "}}").getBytes(StandardCharsets.UTF_8);
        String good = TestSignatures.v1(RunningInbox.SECRET, now, body);
        int kind = r.nextInt(100);
        if (kind < 25) {
            return new Spec("genuine", body, 0, "t=" + now + ",v1=" + good, now + ":" + good);
        }
        if (kind < 27) {
            // hex of either case is accepted; the key is the digest in lower-case, whatever case was sent
            String upper = good.toUpperCase();
            return new Spec("genuine-uppercase-hex", body, 0, "t=" + now + ",v1=" + upper, now + ":" + good);
        }
        if (kind < 30 && !earlier.isEmpty()) {
            Spec original = earlier.get(r.nextInt(earlier.size()));
            if (original.valid()) {
                return new Spec("replay", original.body(), 0, original.header(), original.key());
            }
        }
        if (kind < 35) {
            return new Spec("no-header", body, 0, null, null);
        }
        if (kind < 45) {
            return new Spec("garbage-header", body, 0, printable(r, r.nextInt(200)), null);
        }
        if (kind < 53) {
            return new Spec("random-hex", body, 0, "t=" + now + ",v1=" + hex(r, 64), null);
        }
        if (kind < 61) {
            char[] near = good.toCharArray();
            int at = r.nextInt(near.length);
            near[at] = near[at] == '0' ? '1' : '0';
            return new Spec("one-digit-off", body, 0, "t=" + now + ",v1=" + new String(near), null);
        }
        if (kind < 67) {
            long t = now + (r.nextBoolean() ? -1 : 1) * (301 + r.nextInt(100_000));
            return new Spec("stale-or-future-t", body, 0, TestSignatures.header(RunningInbox.SECRET, t, body), null);
        }
        if (kind < 73) {
            byte[] other = Arrays.copyOf(body, body.length);
            other[r.nextInt(other.length)] ^= (byte) (1 + r.nextInt(127));
            return new Spec("swapped-body", other, 0, "t=" + now + ",v1=" + good, null);
        }
        if (kind < 79) {
            byte[] bytes = new byte[r.nextInt(2048)];
            r.nextBytes(bytes);
            return new Spec("random-bytes", bytes, 0, "t=" + now + ",v1=" + hex(r, 64), null);
        }
        if (kind < 84) {
            return new Spec("wrong-secret", body, 0, TestSignatures.header("whsec_forger_" + r.nextInt(), now, body),
                    null);
        }
        if (kind < 85) {
            // genuinely signed but over the limit: 413, nothing stored (signed when sent, the body is large)
            return new Spec("oversized", null, MAX_BODY + 1 + r.nextInt(4096), null, null);
        }
        String[] malformed = {
            "t=", "t=abc,v1=" + good, "t=-1,v1=" + good, "t=99999999999999999999999,v1=" + good, "v1=" + good,
            "t=" + now, "t=" + now + ",v0=" + good, "t=" + now + ",v1=", "t=" + now + ",,v1=" + good.substring(1),
            "t=+" + now + ",v1=" + hex(r, 64), "t=0" + now + ",v1=" + hex(r, 64), "T=" + now + ",V1=" + hex(r, 64),
            "t=" + now + ",v1=" + good.substring(0, 63), "t=" + now + ",v1=" + good + "0",
            "t=" + now + ",v1=" + "g".repeat(64), "t=" + now + ",v2=" + good, "t=" + now + ",v1=" + hex(r, 64)
                + ",v1=" + hex(r, 64).repeat(1), ("v1=" + hex(r, 64) + ",").repeat(60) + "t=" + now,
            "t=" + now + ";v1=" + good, "t=" + now + " v1=" + good,
            "t=" + now + ",v1=G" + good.toUpperCase().substring(1),
        };
        return new Spec("malformed-header", body, 0, malformed[r.nextInt(malformed.length)], null);
    }

    private int send(Spec spec) throws InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(inbox.webhookUri()).timeout(Duration.ofSeconds(20));
        if (spec.oversize() > 0) {
            byte[] big = new byte[spec.oversize()];
            Arrays.fill(big, (byte) 'x');
            b.header("X-MetaKit-Signature", TestSignatures.header(RunningInbox.SECRET,
                    System.currentTimeMillis() / 1000, big));
            // half with a Content-Length, half chunked
            b.POST(spec.oversize() % 2 == 0 ? HttpRequest.BodyPublishers.ofByteArray(big)
                    : HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big)));
        } else {
            if (spec.header() != null) {
                b.header("X-MetaKit-Signature", spec.header());
            }
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(spec.body()));
        }
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            // a server may close the connection on an oversized body after answering 413; anything else is a fault
            return spec.oversize() > 0 ? 413 : -1;
        }
    }

    private static String printable(Random r, int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append((char) (0x21 + r.nextInt(0x7e - 0x21)));
        }
        return sb.toString();
    }

    private static String hex(Random r, int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(Character.forDigit(r.nextInt(16), 16));
        }
        return sb.toString();
    }
}
