package dev.metakit.inbox.config;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** An unknown value of a setting that takes one of a few words stops startup with one line. */
class EnumeratedSettingsTest {

    @Test
    void anUnknownLogFormatIsRefusedNamingTheWordsItTakes() {
        assertThatThrownBy(() -> EnumeratedSettings.requireKnownLogFormat(Map.of("METAKIT_LOG_FORMAT", "jsn")::get))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("METAKIT_LOG_FORMAT must be one of text, json, got 'jsn'");
        assertThatCode(() -> EnumeratedSettings.requireKnownLogFormat(Map.of("METAKIT_LOG_FORMAT", "json")::get))
                .doesNotThrowAnyException();
        assertThatCode(() -> EnumeratedSettings.requireKnownLogFormat(name -> null)).doesNotThrowAnyException();
    }

    @Test
    void aSwitchIsTrueOrFalse() {
        assertThatThrownBy(() -> EnumeratedSettings.requireKnownValues(
                key -> Optional.of(key.equals("metakit.ops.enabled") ? "yes" : "false")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("metakit.ops.enabled (METAKIT_OPS_ENABLED) must be true or false, got 'yes'");
        assertThatCode(() -> EnumeratedSettings.requireKnownValues(key -> EnumeratedSettings.SWITCHES.contains(key)
                ? Optional.of(" TRUE ") : Optional.empty())).doesNotThrowAnyException();
    }

    @Test
    void theFeedsPublisherIsInProcessOrExternal() {
        assertThatThrownBy(() -> EnumeratedSettings.requireKnownValues(
                key -> key.equals("metakit.feed.publisher") ? Optional.of("debezium") : Optional.empty()))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("metakit.feed.publisher (METAKIT_FEED_PUBLISHER) must be one of in-process, external,"
                        + " got 'debezium'");
        for (String word : new String[] {"in-process", " external "}) {
            assertThatCode(() -> EnumeratedSettings.requireKnownValues(
                    key -> key.equals("metakit.feed.publisher") ? Optional.of(word) : Optional.empty()))
                    .doesNotThrowAnyException();
        }
    }
}
