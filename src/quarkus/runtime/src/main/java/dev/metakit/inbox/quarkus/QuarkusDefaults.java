package dev.metakit.inbox.quarkus;

import dev.metakit.inbox.config.BundleDefaults;
import org.apache.camel.spi.PropertiesComponent;

import java.util.Properties;

/**
 * The bundle's defaults ({@link BundleDefaults#RESOURCE}) with the application's default datasource as the bundle's
 * DataSource, as the last place Camel's properties component looks: the host's own configuration (application.properties,
 * the environment, system properties), which Camel Quarkus reads first, wins key by key. Not a MicroProfile config
 * source: MicroProfile Config takes an empty value for no value, and several of the bundle's defaults are empty
 * (no previous secret, no replaced route...), which every route file's {@code {{placeholder}}} still needs.
 * Only {@code metakit.*} keys, so nothing of the host's changes.
 */
final class QuarkusDefaults {
    private QuarkusDefaults() {
    }

    static Properties load() {
        Properties defaults = BundleDefaults.load();
        defaults.setProperty("metakit.database.data-source-bean", ApplicationDataSource.BEAN_NAME);
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
