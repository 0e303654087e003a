package dev.metakit.inbox.support;

import dev.metakit.inbox.config.EnvironmentNames;

import java.util.List;
import java.util.Map;

/**
 * The environment a process started by a test inherits, without the variables that configure the bundle: a
 * {@code DATABASE_URL} or {@code METAKIT_DATABASE_URL} exported for production (every key's variable, or one of the
 * aliases such as {@code HTTP_PORT}: {@code EnvironmentNames}) must never reach a jar under test, which is then given
 * the test database and its settings explicitly.
 */
public final class ChildEnvironment {
    private static final List<String> CONFIGURING_PREFIXES = List.of("METAKIT_", "DATABASE_", "CAMEL_");

    private ChildEnvironment() {
    }

    /** Removes, in place, every variable that would configure the bundle; returns the same map. */
    public static Map<String, String> withoutBundleSettings(Map<String, String> environment) {
        environment.keySet().removeIf(k -> CONFIGURING_PREFIXES.stream().anyMatch(k::startsWith)
                || EnvironmentNames.ALIASES.containsKey(k));
        return environment;
    }
}
