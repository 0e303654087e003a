package dev.metakit.inbox.worker;

import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/** Which event names ring for a reconcile: a comma list of names or globs ({@code position.*}). */
public final class TradeEvents {
    private final List<Pattern> patterns;

    public TradeEvents(String spec) {
        patterns = Arrays.stream(spec == null ? new String[0] : spec.split(","))
                .map(String::trim).filter(s -> !s.isEmpty())
                .map(glob -> Pattern.compile(Arrays.stream(glob.split("\\*", -1)).map(Pattern::quote)
                        .reduce((a, b) -> a + ".*" + b).orElse("")))
                .toList();
    }

    public boolean isTrade(String event) {
        return event != null && patterns.stream().anyMatch(p -> p.matcher(event).matches());
    }
}
