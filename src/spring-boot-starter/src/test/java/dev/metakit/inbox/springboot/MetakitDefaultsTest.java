package dev.metakit.inbox.springboot;

import org.apache.camel.component.micrometer.springboot.metrics.CamelMetricsConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.availability.AvailabilityHealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.availability.AvailabilityProbesAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthEndpointAutoConfiguration;
import org.springframework.boot.actuate.health.HealthEndpointGroups;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.support.PropertiesLoaderUtils;

import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's defaults are the last property source of the whole application, so any key there that is not the
 * bundle's own would apply to the host too. None may be there: a host that sets nothing keeps Boot's health groups
 * and Camel Spring Boot's route timing as they come.
 */
class MetakitDefaultsTest {

    @Test
    void theDefaultsSetTheBundlesOwnKeysOnly() throws Exception {
        Properties defaults = PropertiesLoaderUtils.loadProperties(new ClassPathResource("metakit-defaults.properties"));
        assertThat(defaults.stringPropertyNames()).isNotEmpty()
                .allSatisfy(key -> assertThat(key).startsWith("metakit."));
    }

    @Test
    void aHostThatSetsNothingKeepsCamelSpringBootsRouteTiming() {
        StandardEnvironment environment = new StandardEnvironment();
        new MetakitDefaults().postProcessEnvironment(environment, null);
        CamelMetricsConfiguration metrics = Binder.get(environment)
                .bindOrCreate("camel.metrics", CamelMetricsConfiguration.class);
        // Camel Spring Boot's defaults: every route timed, every exchange noted
        assertThat(metrics.isEnableRoutePolicy()).isTrue();
        assertThat(metrics.isEnableExchangeEventNotifier()).isTrue();
        assertThat(metrics.getRoutePolicyExcludePattern()).isNull();
    }

    @Test
    void aHostThatSetsNothingHasNoProbesGroups() {
        hostWithTheDefaults().run(context ->
                assertThat(context.getBean(HealthEndpointGroups.class).getNames()).isEmpty());
    }

    @Test
    void aHostThatTurnsProbesOnGetsBootsReadinessGroup() {
        // the host's own switch (Boot turns it on by itself on Kubernetes); the group is Boot's, no indicator added
        hostWithTheDefaults().withPropertyValues("management.endpoint.health.probes.enabled=true").run(context -> {
            HealthEndpointGroups groups = context.getBean(HealthEndpointGroups.class);
            assertThat(groups.getNames()).containsExactlyInAnyOrder("liveness", "readiness");
            assertThat(groups.get("readiness").isMember("readinessState")).isTrue();
            assertThat(groups.get("readiness").isMember("camelHealth")).isFalse();
            assertThat(groups.get("readiness").isMember("metakitInbox")).isFalse();
        });
    }

    private static ApplicationContextRunner hostWithTheDefaults() {
        return new ApplicationContextRunner()
                .withInitializer(context -> new MetakitDefaults().postProcessEnvironment(context.getEnvironment(), null))
                .withConfiguration(AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class,
                        HealthContributorAutoConfiguration.class, AvailabilityHealthContributorAutoConfiguration.class,
                        AvailabilityProbesAutoConfiguration.class, HealthEndpointAutoConfiguration.class));
    }
}
