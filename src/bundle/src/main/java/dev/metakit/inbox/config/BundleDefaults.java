package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.Ordered;
import org.apache.camel.spi.ContextServicePlugin;
import org.apache.camel.spi.PropertiesComponent;
import org.apache.camel.spi.PropertiesSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The bundle's settings with their defaults ({@value #RESOURCE}: only {@code metakit.*} keys), which every route file
 * reads as {@code {{placeholders}}}, so a host sets only the ones it changes. Camel loads this plugin into every
 * CamelContext it builds (a {@link ContextServicePlugin}, listed in META-INF/services): in a camel-main host or a
 * plain CamelContext it adds the defaults as the last properties source Camel reads, after the host's
 * application.properties, locations, environment and system properties. Under Spring Boot and Quarkus it adds nothing:
 * there the starter's and the extension's own defaults come after the host's configuration (Camel Spring Boot asks
 * Boot's environment only for a key Camel's own sources lack, so a source here would win over the host's
 * application.yaml).
 */
public final class BundleDefaults implements ContextServicePlugin {
    public static final String RESOURCE = "META-INF/metakit-inbox-defaults.properties";
    private static final String[] HOSTS_WITH_DEFAULTS_OF_THEIR_OWN = {"org.apache.camel.spring", "org.apache.camel.quarkus"};

    @Override
    public void load(CamelContext context) {
        String contextClass = context.getClass().getName();
        for (String host : HOSTS_WITH_DEFAULTS_OF_THEIR_OWN) {
            if (contextClass.startsWith(host)) {
                return;
            }
        }
        PropertiesComponent properties = context.getPropertiesComponent();
        properties.addPropertiesSource(new Source(load(), properties));
    }

    /** The defaults as the bundle's jar ships them. */
    public static Properties load() {
        Properties defaults = new Properties();
        try (InputStream in = BundleDefaults.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("metakit-inbox: " + RESOURCE + " is missing from its jar");
            }
            defaults.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("metakit-inbox: cannot read " + RESOURCE, e);
        }
        return defaults;
    }

    /**
     * Camel reads a context's initial properties (a host's {@code Main.addInitialProperty}, a test's) after every
     * properties source: this one answers with them where they name the key, so a default never hides what the host
     * set there.
     */
    private record Source(Properties defaults, PropertiesComponent properties) implements PropertiesSource, Ordered {
        @Override
        public String getName() {
            return "metakit-inbox defaults";
        }

        @Override
        public String getProperty(String name) {
            Properties initial = properties instanceof org.apache.camel.component.properties.PropertiesComponent camels
                    ? camels.getInitialProperties() : null;
            if (initial != null && initial.containsKey(name)) {
                return initial.getProperty(name);
            }
            return defaults.getProperty(name);
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST;
        }
    }
}
