package dev.metakit.inbox.conformance;

import dev.metakit.inbox.conformance.TraceOfADelivery.Ids;
import dev.metakit.inbox.sandbox.Delivery;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxEvent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

import static dev.metakit.inbox.conformance.SignedDeliveries.body;
import static dev.metakit.inbox.conformance.SignedDeliveries.now;
import static dev.metakit.inbox.conformance.SignedDeliveries.param;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.awaitility.Awaitility.await;

/**
 * The promises the bundle makes in every runtime, as black-box checks over HTTP, written once: a runtime's test
 * extends this class and says how to reach its {@link RuntimeUnderTest}, booted once for the class with the bundle's
 * default settings. The checks run in order: the ones that take something away (the database, a route, the runtime
 * itself) come last, and the log is read for secrets at the very end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public abstract class ConformanceChecks {
    private static final String SIGNATURE = "X-MetaKit-Signature";
    private static final String EVENT = "X-MetaKit-Event";
    /** metakit.max-body-bytes, default */
    private static final int MAX_BODY_BYTES = 1_048_576;
    private static final Duration READINESS_CHANGE = Duration.ofSeconds(15);
    /** a delivery's way to the feed, on a loaded machine; the spans are exported in batches too */
    private static final Duration TRACE = Duration.ofSeconds(60);
    /** the default outlet route's logger (routes/changes.camel.yaml), which every runtime under test keeps */
    private static final String FEED_OUTLET = "dev.metakit.inbox.feed.outlet";
    private static final Pattern WARN_OR_ERROR = Pattern.compile("\\b(WARN|ERROR)\\b");

    protected abstract RuntimeUnderTest runtime();

    private SignedDeliveries deliveries() {
        return new SignedDeliveries(runtime().parts());
    }

    @Test
    @Order(1)
    void readinessIsUpAndListsTheBundlesChecks() throws Exception {
        // a probe of a loaded machine can miss a check's deadline (the database's 800 ms) and report DOWN for that
        // answer: readiness must be UP once the runtime has settled, with every check of the bundle listed
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            RuntimeUnderTest.Readiness readiness = runtime().readiness();
            assertThat(readiness.up()).as(readiness.report()).isTrue();
            assertThat(readiness.report()).contains("inbox-database").contains("essential-routes");
        });
    }

    @Test
    @Order(2)
    void aSignedDeliveryIsStoredOnceAndItsCopyIsAnsweredDuplicate() throws Exception {
        Signed fresh = signedNow();

        HttpResponse<String> first = post(fresh, EVENT, "position.opened");
        HttpResponse<String> again = post(fresh, EVENT, "position.opened");

        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("stored");
        assertThat(again.statusCode()).as(again.body()).isEqualTo(200);
        assertThat(again.body()).isEqualTo("duplicate");
        assertThat(rowsOf(fresh.key())).isEqualTo(1);
    }

    @Test
    @Order(3)
    void everyBadSignatureIsAnswered400WithItsReasonAndNothingIsStored() throws Exception {
        byte[] body = body();
        long t = now();
        SignedDeliveries d = deliveries();
        String wrongSecret = dev.metakit.inbox.sandbox.WebhookSender.signatureHeader(t,
                List.of(dev.metakit.inbox.sandbox.WebhookSender.sign("whsec_not_the_secret", t, body)));
        long before = InboxRows.all(database());

        assertRejected(d.post(null, body), "missing signature header");
        assertRejected(d.post(null, body, SIGNATURE, "v1=abc"), "malformed signature header");
        assertRejected(d.post(null, body, SIGNATURE, wrongSecret), "signature mismatch");
        assertRejected(d.post(null, body, SIGNATURE, d.signature(t - 3600, body)), "timestamp outside tolerance");
        assertRejected(d.post(null, body, SIGNATURE, d.signature(t + 3600, body)), "timestamp outside tolerance");
        byte[] tampered = Arrays.copyOf(body, body.length);
        tampered[tampered.length - 3]++;
        assertRejected(d.post(null, tampered, SIGNATURE, d.signature(t, body)), "signature mismatch");

        assertThat(InboxRows.all(database())).isEqualTo(before);
    }

    @Test
    @Order(4)
    void aSignatureInTheQueryStringIsNoSignature() throws Exception {
        Signed fresh = signedNow();

        String signature = fresh.signature();
        assertRejected(deliveries().post(param(SIGNATURE, signature), fresh.body()), "missing signature header");
        assertRejected(deliveries().post(param(SIGNATURE.toLowerCase(), signature), fresh.body()),
                "missing signature header");
        assertThat(rowsOf(fresh.key())).isZero();
    }

    @Test
    @Order(5)
    void aQueryParameterBesideTheRealHeadersCountsNeitherForNorAgainst() throws Exception {
        Signed fresh = signedNow();
        String query = param(SIGNATURE, "t=1,v1=00") + "&" + param(EVENT, "evil.query") + "&"
                + param(EVENT.toLowerCase(), "evil.lower");

        HttpResponse<String> answer = deliveries().post(query, fresh.body(), SIGNATURE, fresh.signature(), EVENT,
                "position.opened");

        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).isEqualTo("stored");
        assertThat(InboxRows.event(database(), fresh.key())).isEqualTo("position.opened");
    }

    @Test
    @Order(6)
    void aRepeatedSignatureOrEventHeaderIs400AndNothingIsStored() throws Exception {
        Signed fresh = signedNow();

        assertRejected(post(fresh, EVENT, "position.opened", EVENT, "evil.second"),
                "repeated signature or event header");
        assertRejected(post(fresh, SIGNATURE, fresh.signature()), "repeated signature or event header");
        assertThat(rowsOf(fresh.key())).isZero();
    }

    @Test
    @Order(7)
    void aBodyOverTheLimitIsAnswered413AndNothingIsStoredWhileOneAtTheLimitIsStored() throws Exception {
        byte[] over = paddedBody(MAX_BODY_BYTES + 1);
        byte[] atLimit = paddedBody(MAX_BODY_BYTES);
        long t = now();
        long linesBefore = runtime().log().lines().count();

        HttpResponse<String> tooLarge = deliveries().post(null, over, SIGNATURE, deliveries().signature(t, over));
        HttpResponse<String> fits = deliveries().post(null, atLimit, SIGNATURE, deliveries().signature(t, atLimit));

        assertThat(tooLarge.statusCode()).as(tooLarge.body()).isEqualTo(413);
        assertThat(rowsOf(deliveries().key(t, over))).isZero();
        assertThat(fits.statusCode()).as(fits.body()).isEqualTo(200);
        assertThat(rowsOf(deliveries().key(t, atLimit))).isEqualTo(1);
        // an oversized body is the sender's mistake, answered: no layer (the HTTP server's included) logs an ERROR
        assertThat(runtime().log().lines().skip(linesBefore).filter(line -> line.contains("ERROR")).toList())
                .as("ERROR lines while answering an oversized body").isEmpty();
    }

    @Test
    @Order(8)
    void oneDeliverysTraceReachesFromItsPostThroughItsReconcileToTheFeedMessage() throws Exception {
        assumeTrue(runtime().finishedSpans().isPresent(), "the test runs this runtime untraced");
        Sandbox metakit = runtime().parts().sandbox();
        // account 1 quiet first: a reconcile of an earlier check's delivery, still running when the position opens,
        // would see it before this delivery's reconcile does, and the change would rightly keep that one's context
        await().atMost(TRACE).until(() -> InboxRows.waiting(database(), 1) == 0);

        // MetaKit opens a position on account 1 and delivers its event; the reconcile finds it and feeds a change
        SandboxEvent opened = metakit.market().open(1, "EURUSD", "buy", new BigDecimal("0.10"), BigDecimal.ZERO,
                BigDecimal.ZERO);
        long ticket = ((Number) opened.data().get("ticket")).longValue();
        String key = await().atMost(TRACE).until(() -> metakit.deliveries().acknowledged().stream()
                .filter(d -> d.event().equals(opened)).map(Delivery::key).findFirst(), Optional::isPresent)
                .orElseThrow();

        Ids ingest = Ids.of(InboxRows.traceParent(database(), key));
        SpanData server = awaitSpan(t -> t.span(ingest));
        assertThat(TraceOfADelivery.httpMethod(server)).as("the POST's span, whose context the row keeps")
                .isEqualTo("POST");
        // the reconcile that wrote the position's change: found through the context the change keeps
        Ids wrote = Ids.of(await().atMost(TRACE).until(
                () -> InboxRows.publishedChangeTraceParent(database(), 1, ticket), Objects::nonNull));
        SpanData reconcile = awaitSpan(t -> t.span(wrote));
        assertThat(reconcile.getName()).as("the change fed keeps the reconcile's context")
                .isEqualTo(TraceOfADelivery.RECONCILE);
        assertThat(spans().linked(reconcile, ingest)).as("the reconcile that wrote the change is linked to the delivery")
                .isTrue();
        assertThat(reconcile.getTraceId()).as("the reconcile: a trace of its own, linked to the delivery's")
                .isNotEqualTo(ingest.traceId());
        assertThat(await().atMost(TRACE).until(() -> spans().httpCallsUnder(reconcile), calls -> !calls.isEmpty()))
                .as("the MetaKit calls, spans under the reconcile")
                .allMatch(call -> "GET".equals(TraceOfADelivery.httpMethod(call)));
        SpanData outlet = awaitSpan(t -> t.traceOf(reconcile).filter(s -> String.valueOf(
                s.getAttributes().get(AttributeKey.stringKey("camel.uri"))).contains(FEED_OUTLET)).findFirst());
        assertThat(spans().descendsFrom(outlet, reconcile))
                .as("the feed message's traceparent continues the reconcile's trace at the reconcile").isTrue();

        List<String> forbidden = new ArrayList<>(runtime().parts().secrets().all());
        forbidden.addAll(List.of("Bearer", "\"ticket\"", "EURUSD"));
        for (SpanData span : runtime().finishedSpans().orElseThrow()) {
            span.getAttributes().forEach((name, value) -> assertThat(String.valueOf(value))
                    .as("%s of the span %s: no secret, no payload", name, span.getName())
                    .doesNotContain(forbidden.toArray(String[]::new)));
        }
    }

    private TraceOfADelivery spans() {
        return new TraceOfADelivery(runtime().finishedSpans().orElseThrow());
    }

    private SpanData awaitSpan(Function<TraceOfADelivery, Optional<SpanData>> which) {
        return await().atMost(TRACE).pollInterval(Duration.ofMillis(200)).until(() -> which.apply(spans()),
                Optional::isPresent).orElseThrow();
    }

    @Test
    @Order(20)
    void whileTheDatabaseIsDownReadinessIsDownNamingItAndDeliveriesAre503ThenBothComeBack() throws Exception {
        runtime().parts().postgres().stop();
        try {
            await().atMost(READINESS_CHANGE).pollInterval(Duration.ofMillis(200))
                    .until(() -> !runtime().readiness().up());
            assertThat(runtime().readiness().report()).contains("inbox-database");
            HttpResponse<String> refused = deliveries().deliver(body());
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        } finally {
            runtime().parts().postgres().start();
        }
        await().atMost(READINESS_CHANGE).pollInterval(Duration.ofMillis(200)).until(() -> runtime().readiness().up());
        byte[] body = body();
        await().atMost(READINESS_CHANGE).pollInterval(Duration.ofMillis(200))
                .until(() -> deliveries().deliver(body).statusCode() == 200);
    }

    @Test
    @Order(30)
    void aRouteLeftOutMakesReadinessDownNamingItWithOneErrorLineAndDeliveriesAre503() throws Exception {
        String leftOut = "metakit-reconcile-periodic";
        runtime().leaveOutRoute(leftOut);

        await().atMost(READINESS_CHANGE).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            RuntimeUnderTest.Readiness readiness = runtime().readiness();
            assertThat(readiness.up()).as(readiness.report()).isFalse();
            assertThat(readiness.report()).contains("essential-routes").contains(leftOut);
        });
        byte[] body = body();
        long t = now();
        HttpResponse<String> answer = deliveries().post(null, body, SIGNATURE, deliveries().signature(t, body));
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(503);
        assertThat(rowsOf(deliveries().key(t, body))).isZero();
        await().atMost(READINESS_CHANGE).untilAsserted(() -> assertThat(runtime().log().lines()
                .filter(line -> line.contains("ERROR") && line.contains("metakit-inbox is incomplete")))
                .singleElement().asString().contains(leftOut));
    }

    @Test
    @Order(90)
    void stoppingAsOnSigtermIsQuiet() throws Exception {
        long before = runtime().log().lines().count();

        boolean stopped = runtime().stopAsOnSigterm();

        assumeTrue(stopped, "this runtime hosts the test: it stops when the test JVM's run ends");
        assertThat(runtime().log().lines().skip(before).filter(line -> WARN_OR_ERROR.matcher(line).find()).toList())
                .as("WARN or ERROR lines while stopping").isEmpty();
    }

    @Test
    @Order(100)
    void noSecretTheRuntimeWasGivenAppearsAnywhereInItsLog() throws Exception {
        String log = runtime().log();
        assertThat(log).as("the runtime's log").isNotBlank();
        for (String secret : runtime().parts().secrets().all()) {
            assertThat(log.lines().filter(line -> line.contains(secret)).toList())
                    .as("lines of the log holding a secret").isEmpty();
        }
    }

    /** A fresh body, its signature header signed now with the runtime's secret, and the inbox's key for it. */
    private record Signed(byte[] body, String signature, String key) {
    }

    private Signed signedNow() {
        byte[] body = body();
        long t = now();
        return new Signed(body, deliveries().signature(t, body), deliveries().key(t, body));
    }

    /** The delivery posted with its signature header, then {@code moreHeaders} (names and values in pairs). */
    private HttpResponse<String> post(Signed delivery, String... moreHeaders) throws Exception {
        String[] headers = new String[moreHeaders.length + 2];
        headers[0] = SIGNATURE;
        headers[1] = delivery.signature();
        System.arraycopy(moreHeaders, 0, headers, 2, moreHeaders.length);
        return deliveries().post(null, delivery.body(), headers);
    }

    /** The database the runtime stores into (the test's own connection to it). */
    private DataSource database() {
        return runtime().parts().postgres().dataSource();
    }

    /** The inbox's rows under {@code deliveryKey}: 0 or 1. */
    private long rowsOf(String deliveryKey) throws Exception {
        return InboxRows.count(database(), deliveryKey);
    }

    private static void assertRejected(HttpResponse<String> answer, String reason) {
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
        assertThat(answer.body()).isEqualTo(reason);
    }

    /** A valid delivery body of exactly {@code size} bytes (JSON padded with spaces). */
    private static byte[] paddedBody(int size) {
        byte[] json = body();
        byte[] padded = Arrays.copyOf(json, size);
        Arrays.fill(padded, json.length - 1, size - 1, (byte) ' ');
        padded[size - 1] = '}';
        return padded;
    }
}
