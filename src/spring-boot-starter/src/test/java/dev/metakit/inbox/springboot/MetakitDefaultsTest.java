package dev.metakit.inbox.springboot;

import org.junit.jupiter.api.Test;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.support.PropertiesLoaderUtils;

import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's defaults are the last property source of the whole application, so every key there that is not the
 * bundle's own applies to the host too. Only these may be there, each for the bundle's health or meters (the file
 * says why); a switch of the host's own routes or indicators (stream caching, Boot's db indicator) may not.
 */
class MetakitDefaultsTest {
    private static final Set<String> NOT_THE_BUNDLES_OWN = Set.of(
            "camel.metrics.enable-route-policy",
            "camel.metrics.enable-exchange-event-notifier",
            "management.endpoint.health.probes.enabled",
            "management.endpoint.health.group.readiness.include",
            "management.endpoint.health.group.readiness.show-details");

    @Test
    void theDefaultsSetTheBundlesKeysAndOnlyTheListedOthers() throws Exception {
        Properties defaults = PropertiesLoaderUtils.loadProperties(new ClassPathResource("metakit-defaults.properties"));
        Set<String> others = new TreeSet<>();
        for (String key : defaults.stringPropertyNames()) {
            if (!key.startsWith("metakit.")) {
                others.add(key);
            }
        }
        assertThat(others).isEqualTo(new TreeSet<>(NOT_THE_BUNDLES_OWN));
    }
}
