package dev.metakit.inbox.springboot;

import dev.metakit.inbox.ops.CamelRouteMetrics;
import org.apache.camel.component.micrometer.routepolicy.MicrometerRoutePolicyFactory;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bundle's route meters join the host's CamelContext unless the host has Camel Spring Boot time every route
 * itself ({@code camel.metrics.enable-route-policy=true}), where a second factory would count each exchange twice.
 */
class MetakitRouteFilesTest {
    private static final String FILES = "classpath:route-files/timed.camel.yaml";

    @Test
    void theBundlesRouteMetersAreAddedWhenNothingElseTimesTheRoutes() throws Exception {
        try (DefaultCamelContext context = newContext()) {
            new MetakitRouteFiles(FILES).beforeApplicationStart(context);
            assertThat(context.getRouteDefinition("timed-route")).isNotNull();
            assertThat(context.getRoutePolicyFactories()).hasExactlyElementsOfTypes(CamelRouteMetrics.class);
        }
    }

    @Test
    void theHostsOwnRouteTimingIsNotDoubled() throws Exception {
        try (DefaultCamelContext context = newContext()) {
            MicrometerRoutePolicyFactory hosts = new MicrometerRoutePolicyFactory();
            context.addRoutePolicyFactory(hosts);
            new MetakitRouteFiles(FILES).beforeApplicationStart(context);
            assertThat(context.getRoutePolicyFactories()).containsExactly(hosts);
        }
    }

    private static DefaultCamelContext newContext() {
        return new DefaultCamelContext();
    }
}
