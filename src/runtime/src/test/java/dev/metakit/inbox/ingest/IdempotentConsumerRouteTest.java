package dev.metakit.inbox.ingest;

import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;
import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import dev.metakit.inbox.support.LogCapture;
import org.apache.logging.log4j.Level;
import org.assertj.core.api.InstanceOfAssertFactories;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.awaitility.Awaitility;

import static dev.metakit.inbox.support.TestSignatures.now;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ingest route's {@code idempotentConsumer} on {@link InboxRepository}, over real HTTP on a real PostgreSQL: the
 * shipped route file, and copies of it edited as an integrator would edit them (the key expression, a step added
 * after the store, the EIP's options).
 */
class IdempotentConsumerRouteTest {
    /** the event header a step added to a copy of the route fails on, after the store */
    private static final String FAILING_EVENT = "test.fail-after-store";

    @TempDir
    Path copies;

    private RunningInbox inbox;

    @BeforeEach
    void emptyInbox() {
        TestDatabase.truncateAll();
    }

    @AfterEach
    void stopBundle() {
        if (inbox != null) {
            inbox.close();
        }
    }

    @Test
    void copiesOfOneDeliveryRacingLeaveOneRowOneStoredAndTheRestDuplicate() throws Exception {
        inbox = startWith(shippedRoute());
        byte[] body = body(11);
        String header = TestSignatures.header(RunningInbox.SECRET, now(), body);

        List<HttpResponse<String>> answers = race(24, i -> inbox.post(body, header, "position.opened"));

        assertThat(answers).allSatisfy(a -> assertThat(a.statusCode()).isEqualTo(200));
        assertThat(answers).filteredOn(a -> a.body().equals("stored")).hasSize(1);
        assertThat(answers).filteredOn(a -> a.body().equals("duplicate")).hasSize(23);
        assertThat(rowCount()).isEqualTo(1);
    }

    @ParameterizedTest(name = "removeOnFailure: {0}")
    @ValueSource(booleans = {true, false})
    void aFailureAfterTheStoreIsAnswered503AndTheRetryFindsTheRowKept(boolean removeOnFailure) throws Exception {
        inbox = startWith(withRemoveOnFailure(withStepFailingAfterTheStore(shippedRoute()), removeOnFailure));
        byte[] body = body(12);
        long t = now();
        String header = TestSignatures.header(RunningInbox.SECRET, t, body);

        HttpResponse<String> failed = inbox.post(body, header, FAILING_EVENT);

        assertThat(failed.statusCode()).isEqualTo(503);
        assertThat(failed.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(rowCount(key(t, body))).as("the row committed before the failure is kept").isEqualTo(1);
        HttpResponse<String> retry = inbox.post(body, header, "position.opened");
        assertThat(retry.statusCode()).isEqualTo(200);
        assertThat(retry.body()).isEqualTo("duplicate");
        assertThat(rowCount()).isEqualTo(1);
    }

    @ParameterizedTest(name = "removeOnFailure: {0}")
    @ValueSource(booleans = {true, false})
    void aCopyThatFailsAfterTheStoreNeverDeletesTheRowAnotherCopyWasAnswered2xxFor(boolean removeOnFailure)
            throws Exception {
        inbox = startWith(withRemoveOnFailure(withStepFailingAfterTheStore(shippedRoute()), removeOnFailure));
        byte[] body = body(13);
        long t = now();
        String header = TestSignatures.header(RunningInbox.SECRET, t, body);

        // one after the other: the failing copy is a duplicate of a row already answered "stored"
        assertThat(inbox.post(body, header, "position.opened").body()).isEqualTo("stored");
        assertThat(inbox.post(body, header, FAILING_EVENT).statusCode()).isEqualTo(503);
        assertThat(rowCount(key(t, body))).isEqualTo(1);

        // racing: half of the copies fail after the store, whichever of them inserted the row
        byte[] raced = body(14);
        long t2 = now();
        String racedHeader = TestSignatures.header(RunningInbox.SECRET, t2, raced);
        List<HttpResponse<String>> answers = race(20,
                i -> inbox.post(raced, racedHeader, i % 2 == 0 ? FAILING_EVENT : "position.opened"));

        assertThat(answers).extracting(HttpResponse::statusCode).containsOnly(200, 503);
        assertThat(answers).filteredOn(a -> a.statusCode() == 200).isNotEmpty();
        assertThat(rowCount(key(t2, raced))).as("the row the 2xx copies were answered for").isEqualTo(1);
    }

    @Test
    void anIntegratorsKeySetBeforeTheHandOffIsTheKeyTheRowIsStoredAndDedupedUnder() throws Exception {
        // an integrator who wants one row per event name and signature sets the key before the hand-off, nothing else
        inbox = startWith(shippedRoute().replace(HAND_OFF, """
                        - setProperty:
                            name: metakitDeliveryKey
                            simple: "${header.X-MetaKit-Event}/${exchangeProperty.metakitDeliveryKey}"
                """ + HAND_OFF));
        byte[] body = body(15);
        long t = now();
        String header = TestSignatures.header(RunningInbox.SECRET, t, body);

        assertThat(inbox.post(body, header, "position.opened").body()).isEqualTo("stored");
        assertThat(inbox.post(body, header, "position.modified").body())
                .as("the same signature under another event is another key now").isEqualTo("stored");
        assertThat(inbox.post(body, header, "position.opened").body()).isEqualTo("duplicate");

        assertThat(rowCount("position.opened/" + key(t, body))).isEqualTo(1);
        assertThat(rowCount("position.modified/" + key(t, body))).isEqualTo(1);
        assertThat(rowCount(key(t, body))).as("the shipped key is not used").isZero();
        assertThat(rowCount()).isEqualTo(2);
    }

    @Test
    void anEipKeyOtherThanTheStagedOneIsStoredUnderItsOwnKeyAndSaidOnceInAWarning() throws Exception {
        // one writer instead of the default two: the EIP's own insert then runs on the very writer whose commit
        // resumed the route, which must not wait for itself
        String route = shippedRoute();
        String shipped = "            exchangeProperty: metakitDeliveryKey\n";
        assertThat(route).contains(shipped);
        try (LogCapture log = LogCapture.atOrAbove(Level.WARN)) {
            inbox = startWith(route.replace(shipped,
                            "            simple: \"${exchangeProperty.metakitDeliveryKey}/${random(1000000000)}\"\n"),
                    Map.of("metakit.inbox.writers", "1"));
            byte[] body = body(17);
            long t = now();
            String header = TestSignatures.header(RunningInbox.SECRET, t, body);

            HttpResponse<String> answer = inbox.post(body, header, "position.opened");
            HttpResponse<String> another = inbox.postSigned(body(18), "position.opened");

            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).isEqualTo("stored");
            assertThat(another.body()).isEqualTo("stored");
            assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where delivery_key like '" + key(t, body) + "/%'"))
                    .as("the row under the EIP's own key, committed before its 2xx").isEqualTo(1);
            assertThat(rowCount(key(t, body))).as("the row the hand-off staged").isEqualTo(1);
            assertThat(log.lines()).filteredOn(l -> l.contains("waits for its commit"))
                    .singleElement(InstanceOfAssertFactories.STRING)
                    .contains("Route metakit-ingest", "is not metakitDeliveryKey", "setProperty");
        }
    }

    @Test
    void aRouteEditedToANonEagerConsumerAnswers503RatherThanAcknowledgingBeforeTheCommit() throws Exception {
        String route = shippedRoute();
        assertThat(route).contains("eager: true");
        inbox = startWith(route.replace("eager: true", "eager: false"));
        byte[] body = body(16);

        HttpResponse<String> answer = inbox.postSigned(body, "position.opened");

        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(rowCount()).as("the hand-off's row, kept as after any failure past the store").isEqualTo(1);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {SHIPPED, STEPS_ADDED})
    void deliveriesWaitingForTheirCommitHoldNoThreadEach(String route) throws Exception {
        // the test holds every insert for as long as it takes to count threads: a commit timeout of 30 s instead of
        // the default 2 s, so that no delivery is answered 503 (or shed) meanwhile
        String edited = route.equals(SHIPPED) ? shippedRoute() : withStepsAroundTheStore(shippedRoute());
        inbox = startWith(edited, Map.of("metakit.inbox.commit-timeout-millis", "30000"));
        int deliveries = 120;
        ExecutorService senders = Executors.newFixedThreadPool(deliveries, r -> new Thread(r, SENDER_THREAD));
        try (Connection lock = TestDatabase.dataSource().getConnection()) {
            lock.setAutoCommit(false);
            lock.createStatement().execute("lock table webhook_inbox in share mode");
            Set<Long> before = inboxThreadIds();
            List<Future<HttpResponse<String>>> answers = new ArrayList<>();
            for (int i = 0; i < deliveries; i++) {
                byte[] body = body(100 + i);
                answers.add(senders.submit(() -> inbox.postSigned(body, "position.opened")));
            }
            Awaitility.await().atMost(Duration.ofSeconds(20))
                    .until(() -> inbox.camelContext().getInflightRepository().size("metakit-ingest") == deliveries);

            Set<Long> waiting = inboxThreadIds();
            waiting.removeAll(before);
            assertThat(waiting).as("threads the bundle started while %d deliveries wait for their commit", deliveries)
                    .hasSizeLessThan(8);
            assertThat(threadsInside("IdempotentConsumer"))
                    .as("threads inside the idempotent consumer while the inserts wait").isEmpty();

            lock.commit();
            for (Future<HttpResponse<String>> answer : answers) {
                HttpResponse<String> a = answer.get(20, TimeUnit.SECONDS);
                assertThat(a.statusCode()).isEqualTo(200);
                assertThat(a.body()).isEqualTo("stored");
            }
            assertThat(rowCount()).isEqualTo(deliveries);
            if (route.equals(STEPS_ADDED)) {
                Awaitility.await().atMost(Duration.ofSeconds(20))
                        .untilAsserted(() -> assertThat(copies.resolve("audit").toFile().list()).hasSize(deliveries));
            }
        } finally {
            senders.shutdownNow();
        }
    }

    private static final String SHIPPED = "the shipped route";
    private static final String STEPS_ADDED = "steps added before, between and after the hand-off and the store";
    private static final String HAND_OFF = """
                    - process:
                        id: hand-off-to-group-commit
            """;
    private static final String STORE = """
                    - idempotentConsumer:
                        id: store-in-inbox
            """;
    private static final String DOORBELL = """
                                  - process:
                                      ref: inboxDoorbell
            """;

    /**
     * An integrator's edit: a log before the hand-off, a setHeader between it and the store, and an audit file of each
     * stored delivery (a wireTap) in the store's "stored" branch.
     */
    private String withStepsAroundTheStore(String route) {
        assertThat(route).contains(HAND_OFF, STORE, DOORBELL);
        return route.replace(HAND_OFF, """
                        - log:
                            loggingLevel: DEBUG
                            message: "delivery ${exchangeProperty.metakitDeliveryKey}"
                """ + HAND_OFF).replace(STORE, """
                        - setHeader:
                            name: MetaKitAudit
                            simple: "${exchangeProperty.metakitDeliveryKey}"
                """ + STORE).replace(DOORBELL, DOORBELL + """
                                      - wireTap:
                                          uri: "file:%s?fileName=${exchangeId}"
                """.formatted(copies.resolve("audit")));
    }

    private static final String SENDER_THREAD = "test-sender";

    /** the live threads that are neither the test's senders nor the JDK HTTP client's */
    private static Set<Long> inboxThreadIds() {
        Set<Long> ids = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!t.getName().startsWith(SENDER_THREAD) && !t.getName().startsWith("HttpClient")) {
                ids.add(t.getId());
            }
        }
        return ids;
    }

    private static List<String> threadsInside(String simpleClassName) {
        List<String> inside = new ArrayList<>();
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            for (StackTraceElement frame : stack) {
                if (frame.getClassName().endsWith("." + simpleClassName)) {
                    inside.add(thread.getName());
                    return;
                }
            }
        });
        return inside;
    }

    private RunningInbox startWith(String ingestRoute) throws IOException {
        return startWith(ingestRoute, Map.of());
    }

    private RunningInbox startWith(String ingestRoute, Map<String, String> settings) throws IOException {
        Path copy = copies.resolve("ingest.camel.yaml");
        Files.writeString(copy, ingestRoute);
        Map<String, String> overrides = new java.util.HashMap<>(settings);
        overrides.put("camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans") + ",file:" + copy);
        return RunningInbox.start(overrides);
    }

    private static String shippedRoute() throws IOException {
        return Files.readString(RunningInbox.basedir().resolve("routes/ingest.camel.yaml"));
    }

    /** an integrator's step after the store, inside the EIP, that fails for the test's event */
    private static String withStepFailingAfterTheStore(String route) {
        String steps = "            steps:\n              - choice:\n";
        assertThat(route).contains(steps);
        return route.replace(steps, """
                            steps:
                              - filter:
                                  simple: "${header.X-MetaKit-Event} == '%s'"
                                  steps:
                                    - throwException:
                                        exceptionType: java.lang.IllegalStateException
                                        message: "a step after the store failed"
                              - choice:
                """.formatted(FAILING_EVENT));
    }

    private static String withRemoveOnFailure(String route, boolean removeOnFailure) {
        assertThat(route).contains("removeOnFailure: false");
        return route.replace("removeOnFailure: false", "removeOnFailure: " + removeOnFailure);
    }

    private interface Send {
        HttpResponse<String> send(int copy) throws Exception;
    }

    private static List<HttpResponse<String>> race(int copies, Send send) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(copies);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<HttpResponse<String>>> pending = new ArrayList<>();
            for (int i = 0; i < copies; i++) {
                int copy = i;
                pending.add(pool.submit(() -> {
                    go.await();
                    return send.send(copy);
                }));
            }
            go.countDown();
            List<HttpResponse<String>> answers = new ArrayList<>();
            for (Future<HttpResponse<String>> p : pending) {
                answers.add(p.get());
            }
            return answers;
        } finally {
            pool.shutdownNow();
        }
    }

    private static byte[] body(long ticket) {
        return TestEvents.opened(5, ticket);
    }

    private static String key(long t, byte[] body) {
        return t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, body);
    }

    private static int rowCount() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection();
             ResultSet rs = c.createStatement().executeQuery("select count(*) from webhook_inbox")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static int rowCount(String key) throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("select count(*) from webhook_inbox where delivery_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
