package dev.metakit.inbox.sandbox;

import java.time.Duration;
import java.util.List;

/**
 * MetaKit's retry schedule: the delays between attempts (so attempts = delays + 1) and the per-attempt timeout.
 * {@link #contract()} is the published one; {@link #scaled(double)} shrinks it for tests that are not about timing.
 */
public record DeliverySchedule(List<Duration> delays, Duration requestTimeout) {

    public DeliverySchedule {
        delays = List.copyOf(delays);
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("requestTimeout must be positive");
        }
    }

    /** 5 attempts, 0.5/1/2/4 s between them, 5 s per attempt. */
    public static DeliverySchedule contract() {
        return new DeliverySchedule(List.of(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
                Duration.ofSeconds(4)), Duration.ofSeconds(5));
    }

    public int maxAttempts() {
        return delays.size() + 1;
    }

    /** The same shape with every delay and the timeout multiplied by {@code factor}. */
    public DeliverySchedule scaled(double factor) {
        return new DeliverySchedule(delays.stream().map(d -> scale(d, factor)).toList(), scale(requestTimeout, factor));
    }

    public DeliverySchedule withRequestTimeout(Duration timeout) {
        return new DeliverySchedule(delays, timeout);
    }

    /** One attempt only, no retry: what {@code SandboxCli send} does without {@code --retries}. */
    public DeliverySchedule singleAttempt() {
        return new DeliverySchedule(List.of(), requestTimeout);
    }

    private static Duration scale(Duration d, double factor) {
        return Duration.ofNanos(Math.max(1, Math.round(d.toNanos() * factor)));
    }
}
