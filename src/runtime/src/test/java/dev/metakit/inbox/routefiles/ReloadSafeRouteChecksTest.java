package dev.metakit.inbox.routefiles;

import org.apache.camel.CamelContext;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckRegistry;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.impl.health.DefaultHealthCheckRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ReloadSafeRouteChecksTest {
    private CamelContext context;

    @BeforeEach
    void start() throws Exception {
        context = new DefaultCamelContext();
        HealthCheckRegistry registry = new DefaultHealthCheckRegistry();
        context.getCamelContextExtension().addContextPlugin(HealthCheckRegistry.class, registry);
        // Camel's own, as camel-main registers them
        registry.register(registry.resolveById(ReloadSafeRouteChecks.ROUTES));
        registry.register(registry.resolveById(ReloadSafeRouteChecks.CONSUMERS));
        context.addRoutes(new RouteBuilder() {
            @Override
            public void configure() {
                from("direct:kept").routeId("kept").log("kept");
                from("direct:swapped").routeId("swapped").log("swapped");
            }
        });
        context.start();
        ReloadSafeRouteChecks.replaceCamels(context);
    }

    @AfterEach
    void stop() {
        context.stop();
    }

    @Test
    void takesThePlaceOfCamelsRouteAndConsumerChecks() {
        HealthCheckRegistry registry = HealthCheckRegistry.get(context);
        assertThat(registry.getRepository(ReloadSafeRouteChecks.ROUTES)).get().isInstanceOf(ReloadSafeRouteChecks.class);
        assertThat(registry.getRepository(ReloadSafeRouteChecks.CONSUMERS)).get().isInstanceOf(ReloadSafeRouteChecks.class);
        assertThat(registry.stream()).extracting(HealthCheck::getId).containsExactlyInAnyOrder(
                "route:kept", "route:swapped", "consumer:kept", "consumer:swapped");
    }

    @ParameterizedTest
    @ValueSource(strings = {"route:", "consumer:"})
    void aRouteRemovedWhileItsCheckIsReadIsUnknownNotAnError(String kind) throws Exception {
        HealthCheck swapped = checkOf(kind + "swapped");
        context.getRouteController().stopRoute("swapped");
        context.removeRoute("swapped");

        HealthCheck.Result result = swapped.call(Map.of(HealthCheck.CHECK_ENABLED, true));

        assertThat(result.getState()).isEqualTo(HealthCheck.State.UNKNOWN);
        assertThat(result.getError()).isEmpty();
        assertThat(result.getMessage()).hasValue("Route swapped was removed while read");
        // and the next reading no longer lists it
        assertThat(HealthCheckRegistry.get(context).stream()).extracting(HealthCheck::getId)
                .containsExactlyInAnyOrder("route:kept", "consumer:kept");
    }

    @Test
    void aStoppedRouteIsDownAsCamelSaysIt() throws Exception {
        context.getRouteController().stopRoute("kept");

        HealthCheck.Result result = checkOf("route:kept").call(Map.of(HealthCheck.CHECK_ENABLED, true));

        assertThat(result.getState()).isEqualTo(HealthCheck.State.DOWN);
        assertThat(result.getMessage()).hasValue("Route kept has status Stopped");
    }

    private HealthCheck checkOf(String id) {
        return HealthCheckRegistry.get(context).stream().filter(c -> c.getId().equals(id)).findFirst().orElseThrow();
    }
}
