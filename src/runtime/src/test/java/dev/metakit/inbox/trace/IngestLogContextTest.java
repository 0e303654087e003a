package dev.metakit.inbox.trace;

import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.StoppablePostgres;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The lines on a delivery's way into the inbox, in the standalone run traced by OpenTelemetry's own settings (the
 * SDK's testing exporter in place of OTLP): the line of a delivery answered 503 while the database is down, and a
 * {@code log} step an integrator adds after the store, each with the delivery's key, its account and the ids of its
 * POST's span in the logging context, as the reconcile's lines carry theirs.
 */
class IngestLogContextTest {
    private static final Map<String, String> TRACED = Map.of("OTEL_TRACES_EXPORTER", MemorySpans.NAME);
    private static final AttributeKey<String> COMPONENT = AttributeKey.stringKey("component");
    private static final String NOT_STORED = "Delivery not stored, answered 503 so MetaKit retries";

    @TempDir
    Path temp;

    @Test
    void aDeliveryAnswered503WhileTheDatabaseIsDownIsLoggedWithItsKeyAndItsPostsTrace() throws Exception {
        byte[] body = event("position.opened", 9, 1);
        long t = TestSignatures.now();
        String key = t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, body);
        String header = TestSignatures.header(RunningInbox.SECRET, t, body);
        Map<String, String> settings;
        try (StoppablePostgres postgres = new StoppablePostgres(Files.createDirectories(temp.resolve("pg")));
             LogCapture log = LogCapture.keeping(Level.WARN, line -> line.contains(NOT_STORED))) {
            settings = new HashMap<>(postgres.bundleSettings());
            settings.put("camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "ingest"));
            try (RunningInbox inbox = RunningInbox.start(RunningInbox.basedir(), TRACED, settings)) {
                postgres.stop();

                // MetaKit's retries of one delivery, until one is answered for the failure (the first may be answered
                // at its commit deadline, a shed delivery's DEBUG line)
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    assertThat(inbox.post(body, header, "position.opened").statusCode()).isEqualTo(503);
                    return !log.linesWithContext().isEmpty();
                });
            }
            LogCapture.Line line = log.linesWithContext().get(0);

            assertThat(line.text()).startsWith("WARN metakit-ingest - " + NOT_STORED);
            assertThat(line.context()).containsEntry("metakit.delivery", key).containsEntry("metakit.account", "9");
            SpanData post = await().atMost(Duration.ofSeconds(30)).until(() -> span(line.context()),
                    Optional::isPresent).orElseThrow();
            assertThat(post.getAttributes().get(COMPONENT)).as("the POST's span, Camel's of the webhook's exchange")
                    .isEqualTo("camel-platform-http");
        }
    }

    @Test
    void aLogStepAddedAfterTheStoreCarriesTheDeliveryAndTheTraceItsRowKeeps() throws Exception {
        TestDatabase.truncateAll();
        String shipped = Files.readString(RunningInbox.basedir().resolve("routes/ingest.camel.yaml"));
        String stored = """
                                    steps:
                                      - setBody:
                                          constant: "stored"
                """;
        assertThat(shipped).contains(stored);
        Path route = temp.resolve("ingest.camel.yaml");
        Files.writeString(route, shipped.replace(stored, stored + """
                                      - log:
                                          message: "an integrator's line after the store"
                """));
        byte[] body = event("position.opened", 4, 2);
        List<LogCapture.Line> lines;
        try (LogCapture log = LogCapture.keeping(Level.INFO, line -> line.contains("an integrator's line"));
             RunningInbox inbox = RunningInbox.start(RunningInbox.basedir(), TRACED, Map.of(
                     "camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans") + ",file:" + route))) {
            assertThat(inbox.deliver(body, "position.opened").body()).isEqualTo("stored");
            lines = log.linesWithContext();
        }

        SpanContext post = TraceParent.parse(TestDatabase.text("select trace_parent from webhook_inbox"));
        assertThat(post.isValid()).as("the row keeps its POST's span").isTrue();
        assertThat(lines).singleElement().satisfies(line -> assertThat(line.context())
                .containsEntry("metakit.delivery", TestDatabase.text("select delivery_key from webhook_inbox"))
                .containsEntry("metakit.account", "4")
                .containsEntry("trace_id", post.getTraceId())
                .containsEntry("span_id", post.getSpanId()));
    }

    /** The exported span the ids of a line's logging context name. */
    private static Optional<SpanData> span(Map<String, String> context) {
        assertThat(context).containsKeys("trace_id", "span_id");
        return MemorySpans.exported().stream().filter(s -> s.getTraceId().equals(context.get("trace_id"))
                && s.getSpanId().equals(context.get("span_id"))).findFirst();
    }
}
