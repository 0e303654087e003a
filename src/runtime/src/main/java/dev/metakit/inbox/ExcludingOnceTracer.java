package dev.metakit.inbox;

import org.apache.camel.CamelContext;
import org.apache.camel.opentelemetry2.OpenTelemetryTracer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Camel's OpenTelemetry tracer, deciding once per endpoint whether its {@code excludePatterns} leave it out. Camel
 * decides it again at every exchange's start and end, each pattern matched by normalizing the endpoint's URI and
 * compiling the pattern as a regular expression: with the run's six patterns that was about 170 core-µs per
 * delivery on the webhook's route, which no pattern leaves out. An endpoint's URI is the same for every exchange, so
 * the answer is kept by URI (up to {@value #MAX_KEPT} of them; a host's dynamic endpoints past that are matched as
 * Camel does) and forgotten when the patterns change.
 */
final class ExcludingOnceTracer extends OpenTelemetryTracer {
    static final int MAX_KEPT = 1_000;

    private final Map<String, Boolean> excluded = new ConcurrentHashMap<>();

    @Override
    public boolean exclude(String endpointUri, CamelContext context) {
        if (endpointUri == null || getExcludePatterns() == null) {
            return false;
        }
        Boolean kept = excluded.get(endpointUri);
        if (kept != null) {
            return kept;
        }
        boolean answer = super.exclude(endpointUri, context);
        if (excluded.size() < MAX_KEPT) {
            excluded.put(endpointUri, answer);
        }
        return answer;
    }

    @Override
    public void setExcludePatterns(String excludePatterns) {
        super.setExcludePatterns(excludePatterns);
        excluded.clear();
    }
}
