package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.CamelContextHelper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SecretSettingsTest {

    @Test
    void everySecretSettingOfTheBundleIsSensitiveToCamelAndTheHostsOwnKeywordsStay() {
        CamelContext context = new DefaultCamelContext();
        context.getCamelContextExtension().setAdditionalSensitiveKeywords("hostword");
        SecretSettings secrets = new SecretSettings();
        secrets.setCamelContext(context);

        secrets.register();
        secrets.register(); // camel-main creates YAML beans twice

        for (String key : SecretSettings.KEYS) {
            assertThat(CamelContextHelper.containsSensitive(context, key)).as(key).isTrue();
        }
        assertThat(CamelContextHelper.containsSensitive(context, "my.hostword")).isTrue();
        assertThat(context.getCamelContextExtension().getAdditionalSensitiveKeywords())
                .isEqualTo("hostword,secretprevious,key");
        assertThat(CamelContextHelper.containsSensitive(context, "metakit.api.url")).isFalse();
    }
}
