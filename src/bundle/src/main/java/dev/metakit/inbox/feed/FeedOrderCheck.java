package dev.metakit.inbox.feed;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Checks the feed the way a downstream would, from the changes the outlet took, in the order it took them: per
 * account each new change is the next seq (no gap, none out of order) and every repeat is of a seq already taken.
 * Fed by {@link ChangePublisher#onSent}; the sandbox run prints its {@link #summary()}.
 */
public final class FeedOrderCheck implements Consumer<FeedChange> {
    private final Map<Long, Long> highest = new HashMap<>();
    private long changes;
    private long repeats;
    private String firstViolation;

    @Override
    public synchronized void accept(FeedChange change) {
        long top = highest.getOrDefault(change.accountId(), 0L);
        if (change.seq() == top + 1) {
            highest.put(change.accountId(), change.seq());
            changes++;
        } else if (change.seq() <= top) {
            repeats++;
        } else if (firstViolation == null) {
            firstViolation = change.id() + " after " + change.accountId() + ":" + top;
        }
    }

    public synchronized boolean inOrder() {
        return firstViolation == null;
    }

    /** {@code feed: N changes, in order: yes}, with the repeats and the first violation when there are any. */
    public synchronized String summary() {
        return "feed: " + changes + " changes, in order: " + (firstViolation == null ? "yes" : "NO (" + firstViolation
                + ")") + (repeats > 0 ? ", " + repeats + " sent again" : "");
    }
}
