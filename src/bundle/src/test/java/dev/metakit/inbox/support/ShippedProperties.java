package dev.metakit.inbox.support;

import org.apache.camel.CamelContext;
import org.apache.camel.RoutesBuilder;
import org.apache.camel.component.properties.PropertiesComponent;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.spi.PropertiesFunction;

import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Function;

/** The project's application.properties as Camel's properties component resolves it, with a stand-in environment. */
public final class ShippedProperties {
    private ShippedProperties() {
    }

    /** The application.properties users edit (the jar carries a copy). */
    public static Path file() {
        return Path.of(System.getProperty("user.dir"), "application.properties");
    }

    /**
     * A CamelContext (not started) whose placeholders read {@link #file()}, the way the bundle's routes find the
     * outlet's endpoint, with {@code routes} added.
     */
    public static CamelContext camelContext(RoutesBuilder routes) throws Exception {
        CamelContext context = new DefaultCamelContext();
        context.getPropertiesComponent().setLocation("file:" + file());
        context.addRoutes(routes);
        return context;
    }

    /**
     * Camel's properties component on {@code file}, with {@code env} standing in for the environment in its
     * {@code {{env:...}}} placeholders (this JVM's own environment, a developer's DATABASE_URL say, stays out of the
     * test). Camel's own override of a key by its derived name is off: the placeholders name that variable first.
     */
    public static Function<String, Optional<String>> resolver(Path file, Function<String, String> env) {
        DefaultCamelContext context = new DefaultCamelContext();
        PropertiesComponent pc = (PropertiesComponent) context.getPropertiesComponent();
        pc.setEnvironmentVariableMode(PropertiesComponent.ENVIRONMENT_VARIABLES_MODE_NEVER);
        pc.setSystemPropertiesMode(PropertiesComponent.SYSTEM_PROPERTIES_MODE_NEVER);
        pc.addPropertiesFunction(new PropertiesFunction() {
            @Override
            public String getName() {
                return "env";
            }

            @Override
            public String apply(String remainder) {
                int colon = remainder.indexOf(':');
                String name = colon < 0 ? remainder : remainder.substring(0, colon);
                String value = env.apply(name);
                return value != null ? value : colon < 0 ? null : remainder.substring(colon + 1);
            }
        });
        pc.setLocation("file:" + file);
        context.build();
        return pc::resolveProperty;
    }
}
