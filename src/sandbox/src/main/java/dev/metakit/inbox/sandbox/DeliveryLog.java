package dev.metakit.inbox.sandbox;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Every delivery the sender signed, sent or dropped, with its attempts: what end-to-end tests check the consumer's
 * inbox against. Key sets hold every {@code t:v1} variant of a delivery (see {@link Delivery#keys()}).
 */
public final class DeliveryLog {
    private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();

    void add(Delivery delivery) {
        deliveries.add(delivery);
    }

    public List<Delivery> deliveries() {
        return List.copyOf(deliveries);
    }

    public List<DeliveryAttempt> attempts() {
        return deliveries.stream().flatMap(d -> d.attempts().stream()).toList();
    }

    /** Keys of deliveries with at least one attempt made: a consumer's inbox must hold no other key. */
    public Set<String> sentKeys() {
        return keys(deliveries.stream().filter(Delivery::sent).toList());
    }

    /** Keys of deliveries some attempt of which was answered 2xx: each must have its inbox row. */
    public Set<String> acknowledgedKeys() {
        return keys(acknowledged());
    }

    public List<Delivery> acknowledged() {
        return deliveries.stream().filter(Delivery::acknowledged).toList();
    }

    /** Keys of deliveries the lost fault dropped: never sent, though the event happened. */
    public Set<String> lostKeys() {
        return keys(deliveries.stream().filter(Delivery::lost).toList());
    }

    public Stats stats() {
        long lost = 0, duplicated = 0, succeeded = 0, failed = 0, pending = 0, attempts = 0, non2xx = 0;
        for (Delivery d : deliveries) {
            switch (d.outcome()) {
                case LOST -> lost++;
                case SUCCEEDED -> succeeded++;
                case FAILED -> failed++;
                case PENDING -> pending++;
            }
            if (d.duplicated()) {
                duplicated++;
            }
            for (DeliveryAttempt a : d.attempts()) {
                attempts++;
                if (!a.succeeded()) {
                    non2xx++;
                }
            }
        }
        return new Stats(deliveries.size(), succeeded, failed, lost, duplicated, pending, attempts, non2xx);
    }

    /** Counts over all deliveries; {@code failedAttempts} are the non-2xx answers, timeouts and connection errors. */
    public record Stats(long deliveries, long succeeded, long givenUp, long lost, long duplicated, long pending,
                        long attempts, long failedAttempts) {
    }

    private static Set<String> keys(List<Delivery> selected) {
        Set<String> keys = new LinkedHashSet<>();
        selected.forEach(d -> keys.addAll(d.keys()));
        return keys;
    }
}
