package dev.metakit.inbox.springboot;

import dev.metakit.inbox.worker.InboxToPositionRoutes;
import org.apache.camel.telemetry.Tracer;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Leaves the bundle's endpoints that serve no one delivery (the worker's doorbell and drain, its timers) out of the
 * host's Camel tracing, beside what the host leaves out itself ({@code camel.opentelemetry2.exclude-patterns}): each
 * tick of a timer would otherwise be a trace of its own. Camel's OpenTelemetry tracer is camel-telemetry's, whether
 * {@link MetakitTracingAutoConfiguration} or the host made it.
 */
final class UntracedBundleEndpoints implements BeanPostProcessor {

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof Tracer tracer) {
            tracer.setExcludePatterns(withBundles(tracer.getExcludePatterns()));
        }
        return bean;
    }

    static String withBundles(String hostPatterns) {
        String bundles = InboxToPositionRoutes.UNTRACED_ENDPOINTS;
        if (hostPatterns == null || hostPatterns.isBlank()) {
            return bundles;
        }
        return hostPatterns.contains(bundles) ? hostPatterns : hostPatterns + "," + bundles;
    }
}
