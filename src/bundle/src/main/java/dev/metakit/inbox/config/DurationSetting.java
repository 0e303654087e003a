package dev.metakit.inbox.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one syntax of every duration setting: ISO-8601 ({@code PT5M}, {@code P7D}) or Camel's own ({@code 5m},
 * {@code 500ms}, {@code 1h30m}, {@code 7d}). A bare number is refused: Camel's timers read it as milliseconds, people
 * often mean seconds, and guessing wrong is a factor of a thousand. Settings whose unit is part of their name
 * ({@code *-millis}, {@code *-seconds}) are numbers, not durations, and are not read here.
 */
public final class DurationSetting {
    private static final Pattern CAMEL = Pattern.compile(
            "(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m(?!s))?(?:(\\d+)s)?(?:(\\d+)ms)?");

    private DurationSetting() {
    }

    /**
     * @param key   the setting, named in the one-line error
     * @param value its value
     * @return the duration, positive
     * @throws ConfigurationException naming the key when the value is not a positive duration
     */
    public static Duration parse(String key, String value) {
        String v = value == null ? "" : value.trim();
        Duration d = v.isEmpty() ? null : v.toUpperCase(Locale.ROOT).startsWith("P") ? iso(v) : camel(v);
        if (d == null) {
            throw new ConfigurationException(key + " (" + EnvironmentNames.derived(key) + ") is not a duration, got '"
                    + v + "': use ISO-8601 (PT5M) or Camel's form (5m, 500ms, 1h30m)"
                    + (v.matches("\\d+") ? "; a bare number is refused, its unit would be a guess" : ""));
        }
        if (d.isNegative() || d.isZero()) {
            throw new ConfigurationException(key + " (" + EnvironmentNames.derived(key)
                    + ") must be a positive duration, got '" + v + "'");
        }
        return d;
    }

    public static long millis(String key, String value) {
        return parse(key, value).toMillis();
    }

    private static Duration iso(String v) {
        try {
            return Duration.parse(v);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static Duration camel(String v) {
        Matcher m = CAMEL.matcher(v);
        if (!m.matches()) {
            return null;
        }
        long[] unitMillis = {86_400_000L, 3_600_000L, 60_000L, 1_000L, 1L};
        long total = 0;
        for (int i = 0; i < unitMillis.length; i++) {
            String part = m.group(i + 1);
            if (part != null) {
                total = Math.addExact(total, Math.multiplyExact(Long.parseLong(part), unitMillis[i]));
            }
        }
        return Duration.ofMillis(total);
    }
}
