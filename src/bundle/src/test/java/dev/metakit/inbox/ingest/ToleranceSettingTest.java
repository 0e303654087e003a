package dev.metakit.inbox.ingest;

import dev.metakit.inbox.config.ConfigurationException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The signature's tolerance is from 0 to an hour; anything else stops startup with one line naming the setting. */
class ToleranceSettingTest {

    @Test
    void aToleranceOverAnHourOrBelowZeroStopsStartupNamingTheSettingAndItsRange() {
        for (long refused : new long[] {3601, -1}) {
            WebhookVerification verification = new WebhookVerification();
            verification.setToleranceSeconds(refused);

            assertThatThrownBy(verification::start).isInstanceOf(ConfigurationException.class)
                    .hasMessage("METAKIT_WEBHOOK_TOLERANCE_SECONDS must be from 0 to 3600 (an hour); it is " + refused);
        }
    }
}
