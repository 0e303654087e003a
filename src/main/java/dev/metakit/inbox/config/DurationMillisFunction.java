package dev.metakit.inbox.config;

import org.apache.camel.spi.PropertiesFunction;

import java.time.Duration;
import java.time.format.DateTimeParseException;

/**
 * {@code {{metakit-millis:PT5M}}} → {@code 300000}: lets a setting be given as an ISO-8601 duration or as whole
 * seconds (the interface of {@code METAKIT_RECONCILE_INTERVAL} and friends) where a Camel option wants milliseconds.
 */
@org.apache.camel.spi.annotations.PropertiesFunction("metakit-millis")
public class DurationMillisFunction implements PropertiesFunction {

    @Override
    public String getName() {
        return "metakit-millis";
    }

    @Override
    public String apply(String remainder) {
        return String.valueOf(toMillis(remainder));
    }

    public static long toMillis(String value) {
        String v = value == null ? "" : value.trim();
        try {
            long millis = v.matches("\\d{1,12}") ? Long.parseLong(v) * 1000 : Duration.parse(v).toMillis();
            if (millis <= 0) {
                throw new ConfigurationException("a duration must be positive, got '" + v + "'");
            }
            return millis;
        } catch (DateTimeParseException e) {
            throw new ConfigurationException("'" + v + "' is not a duration: use ISO-8601 (PT5M) or whole seconds (300)");
        }
    }
}
