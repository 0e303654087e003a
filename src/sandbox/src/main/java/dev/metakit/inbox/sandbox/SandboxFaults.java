package dev.metakit.inbox.sandbox;

import java.time.Duration;
import java.util.Locale;

/**
 * What goes wrong on the MetaKit side, each fault its own setting. Probabilities are 0..1.
 *
 * @param maxFirstAttemptDelay  a random extra delay in [0, this] before an event's first attempt: reorders deliveries
 * @param duplicateProbability  an event's signed bytes are delivered twice (two independent retry schedules)
 * @param lostProbability       an event is never sent at all (it still happened: the truth and the API have it)
 * @param api5xxProbability     an API request answers 503
 * @param api429Probability     an API request answers 429 with {@code Retry-After: retryAfterSeconds}
 * @param retryAfterSeconds     the Retry-After value of a 429
 * @param apiLatency            added to every API response
 * @param apiSlowProbability    an API request is slow: {@code apiSlowLatency} more
 * @param apiSlowLatency        the extra latency of a slow request
 * @param rotateAfterEvents     rotate the webhook secret once, after this many events (0 = never)
 * @param rotationWindow        how long the previous secret is still signed with after a rotation
 */
public record SandboxFaults(Duration maxFirstAttemptDelay, double duplicateProbability, double lostProbability,
                            double api5xxProbability, double api429Probability, int retryAfterSeconds,
                            Duration apiLatency, double apiSlowProbability, Duration apiSlowLatency,
                            int rotateAfterEvents, Duration rotationWindow) {

    public SandboxFaults {
        requireProbability("duplicateProbability", duplicateProbability);
        requireProbability("lostProbability", lostProbability);
        requireProbability("api5xxProbability", api5xxProbability);
        requireProbability("api429Probability", api429Probability);
        requireProbability("apiSlowProbability", apiSlowProbability);
        if (api5xxProbability + api429Probability > 1) {
            throw new IllegalArgumentException("api5xxProbability + api429Probability must not exceed 1");
        }
        if (retryAfterSeconds < 0 || rotateAfterEvents < 0) {
            throw new IllegalArgumentException("retryAfterSeconds and rotateAfterEvents must not be negative");
        }
    }

    /** Nothing goes wrong: every event delivered once, the API always answers. */
    public static SandboxFaults none() {
        return new SandboxFaults(Duration.ZERO, 0, 0, 0, 0, 1, Duration.ZERO, 0, Duration.ZERO, 0,
                Duration.ofMinutes(5));
    }

    /** What the default run shows: some reordering, duplicates, losses and API errors; no rotation. */
    public static SandboxFaults moderate() {
        return new SandboxFaults(Duration.ofSeconds(2), 0.05, 0.02, 0.02, 0.02, 1, Duration.ofMillis(10), 0.01,
                Duration.ofMillis(1500), 0, Duration.ofMinutes(5));
    }

    /** Chaos: a lot of everything, and one secret rotation after 100 events. */
    public static SandboxFaults heavy() {
        return new SandboxFaults(Duration.ofSeconds(4), 0.20, 0.05, 0.10, 0.10, 1, Duration.ofMillis(25), 0.05,
                Duration.ofSeconds(3), 100, Duration.ofMinutes(2));
    }

    /** {@code none}, {@code moderate} or {@code heavy}. */
    public static SandboxFaults named(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "none" -> none();
            case "moderate" -> moderate();
            case "heavy" -> heavy();
            default -> throw new IllegalArgumentException("faults must be none, moderate or heavy, was " + name);
        };
    }

    public SandboxFaults withMaxFirstAttemptDelay(Duration value) {
        return new SandboxFaults(value, duplicateProbability, lostProbability, api5xxProbability, api429Probability,
                retryAfterSeconds, apiLatency, apiSlowProbability, apiSlowLatency, rotateAfterEvents, rotationWindow);
    }

    public SandboxFaults withDuplicateProbability(double value) {
        return new SandboxFaults(maxFirstAttemptDelay, value, lostProbability, api5xxProbability, api429Probability,
                retryAfterSeconds, apiLatency, apiSlowProbability, apiSlowLatency, rotateAfterEvents, rotationWindow);
    }

    public SandboxFaults withLostProbability(double value) {
        return new SandboxFaults(maxFirstAttemptDelay, duplicateProbability, value, api5xxProbability,
                api429Probability, retryAfterSeconds, apiLatency, apiSlowProbability, apiSlowLatency,
                rotateAfterEvents, rotationWindow);
    }

    public SandboxFaults withApi5xxProbability(double value) {
        return new SandboxFaults(maxFirstAttemptDelay, duplicateProbability, lostProbability, value,
                api429Probability, retryAfterSeconds, apiLatency, apiSlowProbability, apiSlowLatency,
                rotateAfterEvents, rotationWindow);
    }

    public SandboxFaults withApi429(double probability, int retryAfter) {
        return new SandboxFaults(maxFirstAttemptDelay, duplicateProbability, lostProbability, api5xxProbability,
                probability, retryAfter, apiLatency, apiSlowProbability, apiSlowLatency, rotateAfterEvents,
                rotationWindow);
    }

    public SandboxFaults withApiLatency(Duration value) {
        return new SandboxFaults(maxFirstAttemptDelay, duplicateProbability, lostProbability, api5xxProbability,
                api429Probability, retryAfterSeconds, value, apiSlowProbability, apiSlowLatency, rotateAfterEvents,
                rotationWindow);
    }

    public SandboxFaults withApiSlow(double probability, Duration latency) {
        return new SandboxFaults(maxFirstAttemptDelay, duplicateProbability, lostProbability, api5xxProbability,
                api429Probability, retryAfterSeconds, apiLatency, probability, latency, rotateAfterEvents,
                rotationWindow);
    }

    public SandboxFaults withRotation(int afterEvents, Duration window) {
        return new SandboxFaults(maxFirstAttemptDelay, duplicateProbability, lostProbability, api5xxProbability,
                api429Probability, retryAfterSeconds, apiLatency, apiSlowProbability, apiSlowLatency, afterEvents,
                window);
    }

    private static void requireProbability(String name, double value) {
        if (!(value >= 0 && value <= 1)) {
            throw new IllegalArgumentException(name + " must be within 0..1, was " + value);
        }
    }
}
