package dev.metakit.inbox.config;

import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One syntax for every duration: ISO-8601 or Camel's form; a bare number is refused, naming the setting. */
class DurationSettingTest {

    @Test
    void isoAndCamelsFormMeanTheSame() {
        assertThat(DurationSetting.parse("k", "PT5M")).isEqualTo(Duration.ofMinutes(5));
        assertThat(DurationSetting.parse("k", "5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(DurationSetting.parse("k", "P7D")).isEqualTo(DurationSetting.parse("k", "7d"));
        assertThat(DurationSetting.parse("k", "1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(DurationSetting.millis("k", "500ms")).isEqualTo(500);
        assertThat(DurationSetting.millis("k", "2s500ms")).isEqualTo(2500);
        assertThat(DurationSetting.millis("k", " pt0.5s ")).isEqualTo(500);
    }

    @Test
    void aBareNumberIsRefusedWithOneLineNamingTheSettingAndItsVariable() {
        assertThatThrownBy(() -> DurationSetting.parse("metakit.reconcile.interval", "300000"))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageStartingWith("metakit.reconcile.interval (METAKIT_RECONCILE_INTERVAL) is not a duration,"
                        + " got '300000'")
                .hasMessageContaining("bare number")
                .hasMessageNotContaining("\n");
    }

    @Test
    void garbageZeroAndNegativeAreRefused() {
        for (String v : new String[] {"", "5x", "5M", "1.5s", "abc", "-5s", "P", "m5"}) {
            assertThatThrownBy(() -> DurationSetting.parse("metakit.status.interval", v)).as(v)
                    .isInstanceOf(ConfigurationException.class).hasMessageContaining("metakit.status.interval");
        }
        assertThatThrownBy(() -> DurationSetting.parse("metakit.status.interval", "0s"))
                .hasMessageContaining("must be a positive duration");
        assertThatThrownBy(() -> DurationSetting.parse("metakit.status.interval", "PT-1M"))
                .hasMessageContaining("must be a positive duration");
    }

    @Test
    void theFunctionReadsTheKeySoThatARefusalNamesIt() throws Exception {
        Properties p = new Properties();
        p.put("metakit.reconcile.interval", "5m");
        p.put("metakit.status.interval", "60000");
        try (DefaultCamelContext context = new DefaultCamelContext()) {
            context.getPropertiesComponent().setInitialProperties(p);
            // found as in production, through META-INF/services (which also hands it the CamelContext)
            assertThat(context.resolvePropertyPlaceholders("{{metakit-millis:metakit.reconcile.interval}}"))
                    .isEqualTo("300000");
            assertThatThrownBy(() -> context.resolvePropertyPlaceholders("{{metakit-millis:metakit.status.interval}}"))
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageStartingWith("metakit.status.interval (METAKIT_STATUS_INTERVAL) is not a"
                            + " duration, got '60000'");
        }
    }
}
