package dev.metakit.inbox.quarkus;

import org.apache.camel.spi.PropertiesComponent;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The bundle's settings with their defaults ({@value #RESOURCE}, the standalone run's values but for the DataSource),
 * as the last place Camel's properties component looks: the host's own configuration (application.properties, the
 * environment, system properties), which Camel Quarkus reads first, wins key by key. Not a MicroProfile config
 * source: MicroProfile Config takes an empty value for no value, and several of the bundle's defaults are empty
 * (no previous secret, no replaced route...), which every route file's {@code {{placeholder}}} still needs.
 * Only {@code metakit.*} keys, so nothing of the host's changes.
 */
final class BundleDefaults {
    static final String RESOURCE = "META-INF/metakit-inbox-defaults.properties";

    private BundleDefaults() {
    }

    static Properties load() {
        Properties defaults = new Properties();
        try (InputStream in = BundleDefaults.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("metakit-inbox-quarkus: " + RESOURCE + " is missing from its jar");
            }
            defaults.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("metakit-inbox-quarkus: cannot read " + RESOURCE, e);
        }
        return defaults;
    }

    /** Adds each default the properties component does not hold already as a fallback (initial) property. */
    static void addTo(PropertiesComponent properties) {
        Properties present = properties instanceof org.apache.camel.component.properties.PropertiesComponent camels
                ? camels.getInitialProperties() : null;
        load().forEach((key, value) -> {
            if (present == null || !present.containsKey(key)) {
                properties.addInitialProperty((String) key, (String) value);
            }
        });
    }
}
