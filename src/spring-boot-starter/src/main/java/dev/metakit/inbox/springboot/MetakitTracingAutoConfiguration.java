package dev.metakit.inbox.springboot;

import org.apache.camel.CamelContext;
import org.apache.camel.opentelemetry2.OpenTelemetryTracer;
import org.apache.camel.spi.CamelTracingService;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * A delivery's trace under the host's tracer. While the host's Micrometer Tracing runs on OpenTelemetry (Boot's
 * {@code micrometer-tracing-bridge-otel} with {@code management.tracing.enabled}, its default), Boot has an
 * OpenTelemetry tracer bean: Camel's tracing (camel-opentelemetry2, Camel's own module) is installed on it, so the
 * webhook's POST, the MetaKit calls and the outlet are spans of the host's traces, and the bundle adds its own on the
 * same OpenTelemetry (the reconcile, its links, the stored contexts). With the host's tracing off, or no OpenTelemetry
 * under it, nothing is installed and the bundle stores and sends no trace context.
 *
 * <p>Camel's tracing is the CamelContext's, so the host's own routes are traced too, as Camel Spring Boot's
 * camel-opentelemetry2-starter would trace them. A host keeps its own Camel tracer (any {@link CamelTracingService}
 * bean), sets {@code camel.opentelemetry2.exclude-patterns} for endpoints of its own, or turns Camel's tracing off
 * with {@code camel.opentelemetry2.enabled=false}, the keys of that starter. The bundle's endpoints that serve no one
 * delivery are left out of whichever tracer runs ({@link UntracedBundleEndpoints}).
 */
@AutoConfiguration(afterName = {"org.apache.camel.spring.boot.CamelAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.tracing.OpenTelemetryTracingAutoConfiguration",
        "org.apache.camel.opentelemetry2.starter.OpenTelemetry2AutoConfiguration",
        "org.apache.camel.observation.starter.ObservationAutoConfiguration"})
@ConditionalOnClass(name = "org.apache.camel.opentelemetry2.OpenTelemetryTracer")
public class MetakitTracingAutoConfiguration {

    /** Leaves the bundle's untraced endpoints out of the host's Camel tracer, whoever made it. */
    @Bean
    @ConditionalOnMissingBean(name = "metakitUntracedEndpoints")
    static UntracedBundleEndpoints metakitUntracedEndpoints() {
        return new UntracedBundleEndpoints();
    }

    /** Camel's tracing on the host's OpenTelemetry tracer, while the host traces and has no Camel tracer of its own. */
    @Bean(initMethod = "", destroyMethod = "")
    @ConditionalOnBean(io.opentelemetry.api.trace.Tracer.class)
    @ConditionalOnMissingBean(CamelTracingService.class)
    @ConditionalOnProperty(value = "camel.opentelemetry2.enabled", matchIfMissing = true)
    OpenTelemetryTracer metakitCamelTracer(CamelContext camelContext,
            @Value("${camel.opentelemetry2.exclude-patterns:}") String hostExcludePatterns) {
        OpenTelemetryTracer tracer = new OpenTelemetryTracer();
        tracer.setExcludePatterns(hostExcludePatterns.isBlank() ? null : hostExcludePatterns);
        // Camel starts and stops it with the context; it takes the tracer and propagators beans (the host's)
        tracer.init(camelContext);
        return tracer;
    }
}
