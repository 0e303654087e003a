package dev.metakit.inbox.conformance;

import io.opentelemetry.sdk.trace.data.SpanData;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The conformance checks run inside the host they check, as a Spring Boot or Quarkus test runs inside its application
 * (the test framework boots it on {@link RuntimeParts}): readiness as the host's HTTP probe answers on the parts' port,
 * the log the host writes to its file, the spans the host's own tracing exported.
 */
public abstract class ConformanceChecksInHost extends ConformanceChecks implements RuntimeUnderTest {
    private final String readinessPath;
    private final Path logFile;

    /** @param readinessPath the host's readiness probe, {@code /q/health/ready} say; @param logFile the host's log */
    protected ConformanceChecksInHost(String readinessPath, Path logFile) {
        this.readinessPath = readinessPath;
        this.logFile = logFile;
    }

    /** What the host's tracing exported so far, as OpenTelemetry's SDK testing exporter keeps it. */
    protected abstract List<SpanData> exportedSpans();

    @Override
    protected RuntimeUnderTest runtime() {
        return this;
    }

    @Override
    public Optional<List<SpanData>> finishedSpans() {
        return Optional.of(exportedSpans());
    }

    @Override
    public Readiness readiness() throws Exception {
        return Readiness.probe(URI.create("http://127.0.0.1:" + parts().port() + readinessPath));
    }

    @Override
    public String log() throws Exception {
        return Files.readString(logFile);
    }
}
