package dev.metakit.inbox.support;

import org.assertj.core.api.AbstractDoubleAssert;

import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Reads samples out of a Prometheus scrape. */
public final class Metrics {
    private Metrics() {
    }

    public static AbstractDoubleAssert<?> sample(String metrics, String sample) {
        return assertThat(value(metrics, sample)).as(sample);
    }

    /** The value of the sample whose name and labels (in Prometheus' sorted order) are given. */
    public static double value(String metrics, String sample) {
        OptionalDouble v = find(metrics, sample);
        assertThat(v).as("sample %s in%n%s", sample, metakitLines(metrics)).isPresent();
        return v.getAsDouble();
    }

    public static OptionalDouble find(String metrics, String sample) {
        String name = sample.contains("{") ? sample.substring(0, sample.indexOf('{')) : sample;
        String labels = sample.contains("{") ? sample.substring(sample.indexOf('{') + 1, sample.length() - 1) : "";
        Pattern line = Pattern.compile("^" + Pattern.quote(name) + "(\\{([^}]*)\\})? (\\S+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(metrics);
        while (m.find()) {
            String have = m.group(2) == null ? "" : m.group(2);
            if (containsAll(have, labels)) {
                return OptionalDouble.of(Double.parseDouble(m.group(3)));
            }
        }
        return OptionalDouble.empty();
    }

    /** The bundle's own lines of a scrape, for an assertion's message. */
    public static String metakitLines(String metrics) {
        return metrics.lines().filter(l -> l.startsWith("metakit_")).reduce("", (a, b) -> a + b + "\n");
    }

    private static boolean containsAll(String have, String want) {
        if (want.isEmpty()) {
            return true;
        }
        for (String label : want.split(",")) {
            if (!("," + have + ",").contains("," + label + ",")) {
                return false;
            }
        }
        return true;
    }
}
