package dev.metakit.inbox.conformance;

import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.trace.MemorySpans;
import io.opentelemetry.sdk.trace.data.SpanData;
import org.apache.camel.CamelContext;
import org.apache.logging.log4j.Level;

import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The conformance checks against the standalone run (camel-main, its Vert.x front door, /observe/health/ready on the
 * management port), booted as {@code java -jar} boots it, once for the checks, traced.
 */
class StandaloneConformanceTest extends ConformanceChecksOnParts {
    private LogCapture log;
    private RunningInbox inbox;

    @Override
    protected void startHost(RuntimeParts parts) {
        log = LogCapture.atOrAbove(Level.ALL);
        // on the parts' port, where the sandbox's MetaKit delivers; traced by OpenTelemetry's own settings, its SDK
        // testing exporter in place of OTLP
        Map<String, String> settings = new LinkedHashMap<>(parts.settings());
        settings.put("camel.server.port", String.valueOf(parts.port()));
        inbox = RunningInbox.start(RunningInbox.basedir(), Map.of("OTEL_TRACES_EXPORTER", MemorySpans.NAME), settings);
    }

    @Override
    protected void stopHost() {
        if (inbox != null) {
            inbox.close();
        }
        if (log != null) {
            log.close();
        }
    }

    @Override
    public Optional<List<SpanData>> finishedSpans() {
        return Optional.of(MemorySpans.exported());
    }

    @Override
    public Readiness readiness() throws Exception {
        // the probe's endpoint, every check listed (its default view lists only those that are down)
        HttpResponse<String> ready = inbox.management("/observe/health/ready?exposureLevel=full");
        return new Readiness(ready.statusCode() == 200, ready.body());
    }

    @Override
    public CamelContext camelContext() {
        return inbox.camelContext();
    }

    /** camel-main's stop, which is what its SIGTERM hook runs (the jar's process: SandboxModeIT). */
    @Override
    public boolean stopAsOnSigterm() {
        inbox.close();
        return true;
    }

    @Override
    public String log() {
        return String.join("\n", log.lines());
    }
}
