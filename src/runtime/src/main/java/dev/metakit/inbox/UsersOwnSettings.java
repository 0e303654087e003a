package dev.metakit.inbox;

import dev.metakit.inbox.config.EnvironmentNames;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which of the settings that make a run the user's own (a database, a MetaKit API, a webhook secret) are configured,
 * read from the effective configuration: the value Camel's properties component resolves for the key (the
 * application.properties in use, {@code -D} system properties, and the environment variable Camel derives from the
 * key, such as {@code METAKIT_DATABASE_URL}), plus the key's alias if it has one (such as {@code DATABASE_URL}):
 * {@link EnvironmentNames}.
 * Sandbox mode exists only when none of them is: it replaces the API, the key and the secret, and recreates its
 * database, so it must never stand in for a run the user configured.
 */
final class UsersOwnSettings {
    /** A setting and the value it has when nobody configured it. */
    record Setting(String key, String unconfigured) {
    }

    static final List<Setting> SETTINGS = List.of(
            new Setting("metakit.database.url", ""),
            new Setting("metakit.api.url", "https://api.metakit.dev"),
            new Setting("metakit.api.key", ""),
            new Setting("metakit.webhook.secret", ""));

    private UsersOwnSettings() {
    }

    /**
     * The configured ones, each named with where it comes from (an environment variable, or the properties), never
     * with its value: a URL may carry a password and the secret is a secret.
     *
     * @param resolve the effective value of a key, as the properties component resolves it
     * @param env     the process environment
     */
    static List<String> configured(Function<String, Optional<String>> resolve, Function<String, String> env) {
        List<String> configured = new ArrayList<>();
        for (Setting setting : SETTINGS) {
            Optional<String> fromEnv = EnvironmentNames.setVariable(setting.key(), env);
            String effective = resolve.apply(setting.key()).map(String::trim).orElse("");
            if (fromEnv.isPresent()) {
                configured.add(setting.key() + " (" + fromEnv.get() + ")");
            } else if (!effective.isEmpty() && !effective.equals(setting.unconfigured())) {
                configured.add(setting.key() + " (a properties file or -D" + setting.key() + ")");
            }
        }
        return configured;
    }
}
