package dev.metakit.inbox.sandbox;

import java.net.URI;
import java.time.Clock;
import java.util.Objects;

/**
 * Everything a {@link Sandbox} needs, built with {@link #builder()}. Only the consumer's webhook URL is required.
 *
 * @param seed                one seed, one run: trades, fault choices and rotated secrets all derive from it
 * @param accounts            accounts 1..N
 * @param operationsPerSecond the traffic generator's steady rate (0: no generator, drive it with runOperations)
 * @param operations          the generator stops after this many operations (0: never)
 * @param faults              what goes wrong
 * @param webhookUrl          the consumer's webhook endpoint, registered as {@code wh_1}
 * @param webhookSecret       its signing secret
 * @param apiKey              the bearer key the REST API accepts
 * @param apiPort             the REST API's port on 127.0.0.1 (0: ephemeral)
 * @param apiThreads          the REST API's worker threads
 * @param deliverySchedule    the sender's retry schedule (the contract's, unless a test scales it)
 * @param clock               the clock of trades, deliveries and rotations
 */
public record SandboxSettings(long seed, int accounts, double operationsPerSecond, long operations,
                              SandboxFaults faults, URI webhookUrl, String webhookSecret, String apiKey, int apiPort,
                              int apiThreads, DeliverySchedule deliverySchedule, Clock clock) {

    public static final String DEFAULT_API_KEY = "sandbox-api-key";
    public static final String DEFAULT_WEBHOOK_SECRET = "whsec_sandbox";

    public SandboxSettings {
        if (webhookUrl == null) {
            throw new IllegalArgumentException("webhookUrl is required: the consumer's webhook endpoint, the one"
                    + " setting without a default");
        }
        Objects.requireNonNull(faults, "faults");
        Objects.requireNonNull(webhookSecret, "webhookSecret");
        Objects.requireNonNull(apiKey, "apiKey");
        Objects.requireNonNull(deliverySchedule, "deliverySchedule");
        Objects.requireNonNull(clock, "clock");
        if (accounts < 1) {
            throw new IllegalArgumentException("accounts must be at least 1, was " + accounts);
        }
        if (operationsPerSecond < 0 || operations < 0) {
            throw new IllegalArgumentException("operationsPerSecond and operations must not be negative");
        }
        if (apiPort < 0 || apiPort > 65535) {
            throw new IllegalArgumentException("apiPort must be within 0..65535, was " + apiPort);
        }
        if (apiThreads < 1) {
            throw new IllegalArgumentException("apiThreads must be at least 1, was " + apiThreads);
        }
    }

    /** Seed 42, 3 accounts, 5 operations/s without end, moderate faults, ephemeral API port, the contract schedule. */
    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().seed(seed).accounts(accounts).operationsPerSecond(operationsPerSecond)
                .operations(operations).faults(faults).webhookUrl(webhookUrl).webhookSecret(webhookSecret)
                .apiKey(apiKey).apiPort(apiPort).apiThreads(apiThreads).deliverySchedule(deliverySchedule)
                .clock(clock);
    }

    public static final class Builder {
        private long seed = 42;
        private int accounts = 3;
        private double operationsPerSecond = 5;
        private long operations;
        private SandboxFaults faults = SandboxFaults.moderate();
        private URI webhookUrl;
        private String webhookSecret = DEFAULT_WEBHOOK_SECRET;
        private String apiKey = DEFAULT_API_KEY;
        private int apiPort;
        private int apiThreads = 32;
        private DeliverySchedule deliverySchedule = DeliverySchedule.contract();
        private Clock clock = Clock.systemUTC();

        private Builder() {
        }

        public Builder seed(long value) {
            seed = value;
            return this;
        }

        public Builder accounts(int value) {
            accounts = value;
            return this;
        }

        public Builder operationsPerSecond(double value) {
            operationsPerSecond = value;
            return this;
        }

        public Builder operations(long value) {
            operations = value;
            return this;
        }

        public Builder faults(SandboxFaults value) {
            faults = value;
            return this;
        }

        public Builder webhookUrl(URI value) {
            webhookUrl = value;
            return this;
        }

        public Builder webhookUrl(String value) {
            return webhookUrl(URI.create(value));
        }

        public Builder webhookSecret(String value) {
            webhookSecret = value;
            return this;
        }

        public Builder apiKey(String value) {
            apiKey = value;
            return this;
        }

        public Builder apiPort(int value) {
            apiPort = value;
            return this;
        }

        public Builder apiThreads(int value) {
            apiThreads = value;
            return this;
        }

        public Builder deliverySchedule(DeliverySchedule value) {
            deliverySchedule = value;
            return this;
        }

        public Builder clock(Clock value) {
            clock = value;
            return this;
        }

        public SandboxSettings build() {
            return new SandboxSettings(seed, accounts, operationsPerSecond, operations, faults, webhookUrl,
                    webhookSecret, apiKey, apiPort, apiThreads, deliverySchedule, clock);
        }
    }
}
