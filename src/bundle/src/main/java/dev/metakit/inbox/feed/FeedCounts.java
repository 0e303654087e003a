package dev.metakit.inbox.feed;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** What the publisher has done since this instance started, and who is told of each change the outlet confirmed. */
final class FeedCounts {
    /** changes the outlet took and that were marked published */
    final AtomicLong published = new AtomicLong();
    /** publish attempts that failed (the outlet's error, or the database's) */
    final AtomicLong failures = new AtomicLong();
    /** changes the outlet took that this boot could not mark: the account was taken over meanwhile */
    final AtomicLong fenced = new AtomicLong();
    private final List<Consumer<FeedChange>> sentListeners = new CopyOnWriteArrayList<>();

    void onSent(Consumer<FeedChange> listener) {
        sentListeners.add(listener);
    }

    void sent(List<FeedChange> confirmed) {
        if (!sentListeners.isEmpty()) {
            confirmed.forEach(change -> sentListeners.forEach(l -> l.accept(change)));
        }
    }
}
