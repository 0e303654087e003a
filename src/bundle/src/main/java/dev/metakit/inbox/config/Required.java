package dev.metakit.inbox.config;

/**
 * A bean's setting that has no default in Java: application.properties (or the host's configuration) gives every
 * setting its value, and a bean started without one is refused, naming the property key.
 */
public final class Required {
    private Required() {
    }

    public static <T> T setting(T value, String key) {
        if (value == null) {
            throw new ConfigurationException(key + " is not set: give it a value (application.properties has the default)");
        }
        return value;
    }
}
