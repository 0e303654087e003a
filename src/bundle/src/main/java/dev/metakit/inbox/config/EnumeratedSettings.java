package dev.metakit.inbox.config;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Settings that take one of a few words. An unknown word stops startup with one line naming the setting and the words
 * it takes, instead of meaning something by accident: {@code METAKIT_LOG_FORMAT=jsn} would leave log4j with no
 * appender (no log output at all), {@code METAKIT_OPS_ENABLED=yes} would read as false.
 */
public final class EnumeratedSettings {
    /** Read by log4j2.properties from the environment when the JVM starts, before any configuration is: not a key. */
    public static final String LOG_FORMAT = "METAKIT_LOG_FORMAT";
    public static final List<String> LOG_FORMATS = List.of("text", "json");
    /** The keys that are true or false. */
    public static final List<String> SWITCHES = List.of("metakit.dev-mode", "metakit.ops.enabled");
    /** Who publishes the change feed: this bundle's publisher, or something reading the table (Debezium). */
    public static final String FEED_PUBLISHER = "metakit.feed.publisher";
    public static final List<String> FEED_PUBLISHERS = List.of("in-process", "external");
    /** The keys that take one of a few words (besides the switches), each → its words. */
    public static final Map<String, List<String>> WORDS = Map.of(FEED_PUBLISHER, FEED_PUBLISHERS);

    private EnumeratedSettings() {
    }

    /** Whether {@link #FEED_PUBLISHER}'s word says the in-process publisher publishes; an unknown word is refused. */
    public static boolean feedPublishedInProcess(String publisher) {
        String p = publisher.trim();
        if (!FEED_PUBLISHERS.contains(p)) {
            throw new IllegalArgumentException("METAKIT_FEED_PUBLISHER must be one of "
                    + String.join(", ", FEED_PUBLISHERS) + ", got '" + publisher + "'");
        }
        return p.equals("in-process");
    }

    /** Before anything logs: log4j2.properties picks the appender named after the value, and an unknown one has none. */
    public static void requireKnownLogFormat(Function<String, String> env) {
        String value = env.apply(LOG_FORMAT);
        if (value != null && !LOG_FORMATS.contains(value)) {
            throw new ConfigurationException(LOG_FORMAT + " must be one of " + String.join(", ", LOG_FORMATS)
                    + ", got '" + value + "'");
        }
    }

    /** @param resolve the effective value of a key, as the properties component resolves it */
    public static void requireKnownValues(Function<String, Optional<String>> resolve) {
        for (String key : SWITCHES) {
            resolve.apply(key).map(String::trim).ifPresent(value -> {
                String v = value.toLowerCase(Locale.ROOT);
                if (!v.equals("true") && !v.equals("false")) {
                    throw new ConfigurationException(key + " (" + EnvironmentNames.derived(key)
                            + ") must be true or false, got '" + value + "'");
                }
            });
        }
        WORDS.forEach((key, words) -> resolve.apply(key).map(String::trim).ifPresent(value -> {
            if (!words.contains(value)) {
                throw new ConfigurationException(key + " (" + EnvironmentNames.derived(key) + ") must be one of "
                        + String.join(", ", words) + ", got '" + value + "'");
            }
        }));
    }
}
