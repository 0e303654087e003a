package dev.metakit.inbox.support;

import java.time.Duration;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Lets a fault last its stated length (an 8 s database stop, a 5 s API outage: the length is the fault) while
 * checking, all along, what must stay true meanwhile; a broken invariant fails the wait.
 */
public final class FaultWindow {
    private static final Duration CHECK_EVERY = Duration.ofMillis(200);

    private FaultWindow() {
    }

    /** Until {@code deadlineNanos} ({@link System#nanoTime()}), {@code invariant} holds at every check. */
    public static void holdUntil(long deadlineNanos, String invariantName, Callable<Boolean> invariant)
            throws Exception {
        long left = deadlineNanos - System.nanoTime();
        if (left > CHECK_EVERY.toNanos()) {
            Duration d = Duration.ofNanos(left);
            // the slack only matters if the invariant was false at first and then true for the whole window
            await(invariantName).during(d).atMost(d.plusSeconds(5)).pollInterval(CHECK_EVERY).until(invariant);
        }
        assertThat(invariant.call()).as(invariantName).isTrue();
    }

    public static void holdFor(Duration d, String invariantName, Callable<Boolean> invariant) throws Exception {
        holdUntil(System.nanoTime() + d.toNanos(), invariantName, invariant);
    }
}
