package dev.metakit.inbox.config;

/**
 * A setting that is missing or unusable. Its message is one line naming the setting and why, fit to be the only
 * thing printed at startup; it never contains a secret value.
 */
public class ConfigurationException extends RuntimeException {
    public ConfigurationException(String message) {
        super(message);
    }

    public ConfigurationException(String message, Throwable cause) {
        super(message, cause);
    }
}
