package dev.metakit.inbox.faults;

import java.time.Duration;

import static org.awaitility.Awaitility.await;

/** Lets a fault last: time passing is the condition (the clients keep sending meanwhile). */
final class Pause {
    private Pause() {
    }

    static void until(long nanoTime) {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            Duration d = Duration.ofNanos(left);
            await().pollDelay(d).atMost(d.plusSeconds(5)).until(() -> true);
        }
    }

    static void lasting(Duration d) {
        until(System.nanoTime() + d.toNanos());
    }
}
