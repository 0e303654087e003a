package dev.metakit.inbox.config;

import org.apache.camel.spi.PropertiesFunction;

/**
 * {@code {{metakit-millis:metakit.reconcile.interval}}} → {@code 300000}: the value of a duration setting
 * ({@link DurationSetting}: ISO-8601 or Camel's form, never a bare number) in the milliseconds a Camel option wants.
 * It takes the key rather than the value so that a refusal names the setting.
 */
@org.apache.camel.spi.annotations.PropertiesFunction("metakit-millis")
public class DurationMillisFunction extends ContextAwareBean implements PropertiesFunction {
    @Override
    public String getName() {
        return "metakit-millis";
    }

    @Override
    public String apply(String key) {
        String k = key.trim();
        String value = getCamelContext().getPropertiesComponent().resolveProperty(k)
                .orElseThrow(() -> new ConfigurationException(k + " is not set"));
        return String.valueOf(DurationSetting.millis(k, value));
    }
}
