package dev.metakit.inbox.trace;

import dev.metakit.inbox.reconcile.FullReconcile;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.support.EventNotifierSupport;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One delivery followed by its trace in the standalone run, traced by OpenTelemetry's own settings (the SDK's
 * autoconfiguration, its testing exporter in place of OTLP): the POST's server span, whose context the inbox keeps
 * with the row; the reconcile's span, linked to it, with the MetaKit calls under it; the change's row and the feed
 * message's traceparent in the reconcile's trace; the reconcile's and the outlet's log lines with the account and the
 * trace's ids in their logging context; a full reconcile's per-account spans in its own trace. And with no OTEL_*
 * setting, none of it but the account.
 */
class DeliveryTraceTest {
    private static final String OUTLET_LOGGER = "dev.metakit.inbox.feed.outlet";
    private static final String RECONCILE_LOGGER = "dev.metakit.inbox.reconcile";
    private static final List<String> LOGGERS = List.of(OUTLET_LOGGER, RECONCILE_LOGGER);
    // the attributes Camel's tracing (camel-opentelemetry2) gives the spans of its endpoints
    private static final AttributeKey<String> COMPONENT = AttributeKey.stringKey("component");
    private static final AttributeKey<String> HTTP_METHOD = AttributeKey.stringKey("http.method");
    private static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
    private static final AttributeKey<String> TRIGGER = AttributeKey.stringKey("metakit.reconcile.trigger");

    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();
    private final FakeMetaKit metakit = fixture.metakit();
    private final List<Map<String, Object>> outletHeaders = Collections.synchronizedList(new ArrayList<>());
    /** the logging context of each line of the reconcile's logger and of the outlet's */
    private final Map<String, Map<String, String>> logContexts = new ConcurrentHashMap<>();
    private final AbstractAppender capture = new AbstractAppender("trace-log-capture", null, null, true,
            Property.EMPTY_ARRAY) {
        @Override
        public void append(LogEvent event) {
            logContexts.put(event.getLoggerName(), event.getContextData().toMap());
        }
    };

    @BeforeEach
    void captureLogContexts() {
        capture.start();
        LOGGERS.forEach(name -> ((Logger) LogManager.getLogger(name)).addAppender(capture));
    }

    @AfterEach
    void stopCapture() {
        LOGGERS.forEach(name -> ((Logger) LogManager.getLogger(name)).removeAppender(capture));
    }

    @Test
    void oneDeliverysTraceReachesFromThePostThroughItsReconcileToTheFeedMessage() throws Exception {
        metakit.open(3, 10, "0.10", "0", "1.09000", fixture.t0());
        RunningInbox inbox = fixture.start(Map.of("OTEL_TRACES_EXPORTER", MemorySpans.NAME), Map.of());
        recordOutletHeaders(inbox);
        byte[] body = event("position.opened", 3, 10);

        assertThat(inbox.postSigned(body, "position.opened").body()).isEqualTo("stored");
        awaitPublished();

        SpanContext ingest = TraceParent.parse(TestDatabase.text("select trace_parent from webhook_inbox"));
        assertThat(ingest.isValid()).as("the delivery's row keeps the ingest span's context").isTrue();
        SpanData server = await().atMost(Duration.ofSeconds(30)).until(() -> span(s ->
                s.getTraceId().equals(ingest.getTraceId()) && s.getSpanId().equals(ingest.getSpanId())),
                Optional::isPresent).orElseThrow();
        assertThat(server.getAttributes().get(COMPONENT)).as("Camel's span of the webhook's exchange")
                .isEqualTo("camel-platform-http");
        assertThat(server.getAttributes().get(HTTP_METHOD)).isEqualTo("POST");
        assertThat(server.getParentSpanContext().isValid()).as("the POST starts the trace").isFalse();

        SpanData reconcile = await().atMost(Duration.ofSeconds(30)).until(() -> span(s ->
                s.getName().equals("metakit.reconcile") && s.getLinks().stream().map(LinkData::getSpanContext)
                        .anyMatch(l -> l.getTraceId().equals(ingest.getTraceId())
                                && l.getSpanId().equals(ingest.getSpanId()))), Optional::isPresent).orElseThrow();
        assertThat(reconcile.getTraceId()).as("a trace of its own, linked").isNotEqualTo(ingest.getTraceId());
        assertThat(reconcile.getAttributes().asMap()).containsValues(3L, "event", 1L);

        List<SpanData> calls = await().atMost(Duration.ofSeconds(30)).until(() -> clientCallsUnder(reconcile),
                c -> !c.isEmpty());
        assertThat(calls).as("the MetaKit call (GET positions), Camel's HTTP span under the reconcile")
                .allMatch(c -> "GET".equals(c.getAttributes().get(HTTP_METHOD))
                        && metakit.url().startsWith(String.valueOf(c.getAttributes().get(SERVER_ADDRESS))));
        assertThat(calls).hasSize(metakit.calls("positions") + metakit.calls("deals"));

        SpanContext change = TraceParent.parse(TestDatabase.text("select trace_parent from position_changes"));
        assertThat(change.getTraceId()).as("the change keeps the reconcile's context").isEqualTo(reconcile.getTraceId());
        assertThat(change.getSpanId()).isEqualTo(reconcile.getSpanId());
        assertThat(outletHeaders).hasSize(1);
        SpanContext sent = TraceParent.parse((String) outletHeaders.get(0).get(TraceParent.HEADER));
        assertThat(sent.getTraceId()).as("the feed message's traceparent continues the reconcile's trace")
                .isEqualTo(reconcile.getTraceId());

        // the reconcile's line ("Reconciled account 3: ...") and the outlet's carry the account and the reconcile's ids
        assertThat(logContexts.get(RECONCILE_LOGGER)).containsEntry("metakit.account", "3")
                .containsEntry("trace_id", reconcile.getTraceId()).containsEntry("span_id", reconcile.getSpanId());
        assertThat(logContexts.get(OUTLET_LOGGER)).containsEntry("metakit.account", "3")
                .containsEntry("trace_id", reconcile.getTraceId());

        // a full reconcile: its own trace, each account's reconcile a span in it
        inbox.camelContext().createProducerTemplate().sendBodyAndHeader(InboxToPositionRoutes.FULL_RECONCILE, null,
                FullReconcile.TRIGGER_HEADER, "manual");
        SpanData scan = await().atMost(Duration.ofSeconds(30)).until(() -> span(s ->
                s.getName().equals("metakit.reconcile") && "manual".equals(s.getAttributes().get(TRIGGER))),
                Optional::isPresent).orElseThrow();
        assertThat(scan.getParentSpanContext().isValid()).as("a child of the full reconcile's spans").isTrue();
        assertThat(MemorySpans.exported()).anyMatch(s -> s.getTraceId().equals(scan.getTraceId())
                && "full-reconcile".equals(s.getName()));

        // no secret and no payload in any attribute of any span the run made
        List<String> forbidden = List.of(RunningInbox.SECRET, FakeMetaKit.API_KEY, "Bearer",
                new String(body, StandardCharsets.UTF_8), "\"ticket\"", "1.09", "EURUSD");
        List<SpanData> all = MemorySpans.exported();
        assertThat(all).hasSizeGreaterThan(4);
        for (SpanData span : all) {
            span.getAttributes().forEach((key, value) -> assertThat(String.valueOf(value))
                    .as("%s of span %s", key, span.getName())
                    .doesNotContain(forbidden.toArray(String[]::new)));
        }
    }

    @Test
    void withoutOpenTelemetrySettingsNoTraceIsStoredOrSent() throws Exception {
        metakit.open(3, 10, "0.10", "0", "1.09000", fixture.t0());
        RunningInbox inbox = fixture.start(Map.of());
        recordOutletHeaders(inbox);

        assertThat(inbox.postSigned(event("position.opened", 3, 10), "position.opened").body()).isEqualTo("stored");
        awaitPublished();

        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where trace_parent is not null")).isZero();
        assertThat(TestDatabase.scalar("select count(*) from position_changes where trace_parent is not null")).isZero();
        assertThat(outletHeaders).hasSize(1);
        assertThat(outletHeaders.get(0)).doesNotContainKey(TraceParent.HEADER);
        assertThat(logContexts.get(RECONCILE_LOGGER)).containsEntry("metakit.account", "3")
                .doesNotContainKeys("trace_id", "span_id");
    }

    /** The headers of what the outlet endpoint is handed, as any endpoint put in place of the log would be. */
    private void recordOutletHeaders(RunningInbox inbox) throws Exception {
        EventNotifierSupport sendings = new EventNotifierSupport() {
            @Override
            public void notify(CamelEvent event) {
                if (event instanceof CamelEvent.ExchangeSendingEvent sending
                        && sending.getEndpoint().getEndpointUri().startsWith("log://" + OUTLET_LOGGER)) {
                    outletHeaders.add(new HashMap<>(sending.getExchange().getMessage().getHeaders()));
                }
            }
        };
        inbox.camelContext().getManagementStrategy().addEventNotifier(sendings);
        sendings.start();
    }

    private static void awaitPublished() {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
                TestDatabase.scalar("select count(*) from position_changes where published_at is not null") == 1);
    }

    private static Optional<SpanData> span(java.util.function.Predicate<SpanData> which) {
        return MemorySpans.exported().stream().filter(which).findFirst();
    }

    /** The client spans whose chain of parents reaches {@code reconcile}. */
    private static List<SpanData> clientCallsUnder(SpanData reconcile) {
        List<SpanData> trace = MemorySpans.exported().stream()
                .filter(s -> s.getTraceId().equals(reconcile.getTraceId())).toList();
        return trace.stream().filter(s -> "camel-http".equals(s.getAttributes().get(COMPONENT)))
                .filter(s -> Stream.iterate(s, p -> p != null, p -> parentOf(p, trace))
                        .anyMatch(p -> p.getSpanId().equals(reconcile.getSpanId())))
                .toList();
    }

    private static SpanData parentOf(SpanData span, List<SpanData> trace) {
        return trace.stream().filter(p -> p.getSpanId().equals(span.getParentSpanId())).findFirst().orElse(null);
    }
}
