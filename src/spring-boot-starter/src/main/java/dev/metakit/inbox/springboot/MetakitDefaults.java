package dev.metakit.inbox.springboot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.io.support.ResourcePropertySource;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Adds the bundle's defaults (metakit-defaults.properties) as the last property source: the route files read every
 * {@code metakit.*} key as a Camel placeholder, so each needs a value, and a host sets only the ones it changes.
 * Only {@code metakit.*} keys: a source of the whole application, it would change a host's own Camel and Actuator
 * settings too (MetakitDefaultsTest holds it to that).
 */
public class MetakitDefaults implements EnvironmentPostProcessor {
    static final String SOURCE = "classpath:metakit-defaults.properties";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        try {
            environment.getPropertySources().addLast(new ResourcePropertySource("metakitDefaults", SOURCE));
        } catch (IOException e) {
            throw new UncheckedIOException("metakit-inbox starter: " + SOURCE + " is missing", e);
        }
    }
}
