package dev.metakit.inbox.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The environment variables a key is read from: first the name Camel derives from the key (upper case, '.' and '-'
 * as '_': {@code metakit.retention.batch-size} from {@code METAKIT_RETENTION_BATCH_SIZE}), which Camel's properties
 * component reads as an override of the key wherever the key is set; then, for a few keys, one conventional alias.
 * application.properties spells the same rule as nested placeholders ({@code {{env:METAKIT_DATABASE_URL:{{env:DATABASE_URL:}}}}}).
 */
public final class EnvironmentNames {
    /** alias → the one key it sets. */
    public static final Map<String, String> ALIASES = Map.of(
            "DATABASE_URL", "metakit.database.url",
            "DATABASE_USER", "metakit.database.user",
            "DATABASE_PASSWORD", "metakit.database.password",
            "HTTP_HOST", "camel.server.host",
            "HTTP_PORT", "camel.server.port",
            "MANAGEMENT_HOST", "camel.management.host",
            "MANAGEMENT_PORT", "camel.management.port");

    /**
     * Variables earlier versions read, each → the variable of its key now. Set, they stop startup with one line rather
     * than be ignored without a word (a pool size or an instance id silently back to its default).
     */
    public static final Map<String, String> RENAMED = Map.of(
            "METAKIT_DB_POOL_SIZE", "METAKIT_DATABASE_POOL_SIZE",
            "METAKIT_EMBEDDED_DB_DIR", "METAKIT_DATABASE_EMBEDDED_DIR",
            "METAKIT_RETENTION_BATCH", "METAKIT_RETENTION_BATCH_SIZE",
            "METAKIT_WORKER_INSTANCE_ID", "METAKIT_INSTANCE_ID");

    private EnvironmentNames() {
    }

    /** Stops at the first of the {@link #RENAMED} variables that is set. */
    public static void refuseRenamed(Function<String, String> env) {
        new TreeMap<>(RENAMED).forEach((former, now) -> {
            if (env.apply(former) != null) {
                throw new ConfigurationException(former + " is now " + now + ": rename it");
            }
        });
    }

    /** The name Camel derives from a key. */
    public static String derived(String key) {
        return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /** The names a key is read from, the one that wins first. */
    public static List<String> of(String key) {
        List<String> names = new ArrayList<>();
        names.add(derived(key));
        ALIASES.forEach((alias, aliased) -> {
            if (aliased.equals(key)) {
                names.add(alias);
            }
        });
        return names;
    }

    /** The first of the key's variables that is set and not blank, as the variable's name. */
    public static Optional<String> setVariable(String key, Function<String, String> env) {
        return of(key).stream().filter(name -> {
            String value = env.apply(name);
            return value != null && !value.isBlank();
        }).findFirst();
    }

    /**
     * The key's value from the environment as application.properties reads it: the first of its variables that is set,
     * even to nothing (an empty {@code METAKIT_DATABASE_URL} hides {@code DATABASE_URL} there too); empty when none is
     * set or the value is blank.
     */
    public static Optional<String> read(String key, Function<String, String> env) {
        return of(key).stream().map(env).filter(Objects::nonNull).findFirst()
                .filter(value -> !value.isBlank());
    }
}
