package dev.metakit.inbox.sandbox;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** One event signed for one endpoint: the exact bytes and header every attempt (and any duplicate) carries. */
public final class Delivery {
    /** How a delivery ended; a duplicated delivery has succeeded if either copy did. */
    public enum Outcome { PENDING, SUCCEEDED, FAILED, LOST }

    private final SandboxEvent event;
    private final WebhookEndpoint endpoint;
    private final long t;
    private final List<String> v1s;
    private final byte[] body;
    private final String signatureHeader;
    /** the copies sent: none for a lost delivery, two for a duplicated one (never both), else one */
    private final int copies;
    private final List<DeliveryAttempt> attempts = new ArrayList<>();
    private Outcome outcome;
    private int openCopies;

    Delivery(SandboxEvent event, WebhookEndpoint endpoint, long t, List<String> v1s, byte[] body, boolean lost,
             boolean duplicated) {
        this.event = event;
        this.endpoint = endpoint;
        this.t = t;
        this.v1s = List.copyOf(v1s);
        this.body = body;
        this.copies = lost ? 0 : duplicated ? 2 : 1;
        this.signatureHeader = WebhookSender.signatureHeader(t, v1s);
        this.outcome = lost ? Outcome.LOST : Outcome.PENDING;
        this.openCopies = copies;
    }

    public SandboxEvent event() {
        return event;
    }

    public String endpointId() {
        return endpoint.id();
    }

    WebhookEndpoint endpoint() {
        return endpoint;
    }

    public long t() {
        return t;
    }

    public List<String> v1s() {
        return v1s;
    }

    /** The dedupe key {@code t:v1} with the current secret's signature (the first {@code v1}). */
    public String key() {
        return t + ":" + v1s.get(0);
    }

    /** {@code t:v1} for every {@code v1} in the header: two during a rotation window, whichever one a consumer keys on. */
    public List<String> keys() {
        return v1s.stream().map(v1 -> t + ":" + v1).toList();
    }

    public byte[] body() {
        return body.clone();
    }

    byte[] bodyBytes() {
        return body;
    }

    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    public String signatureHeader() {
        return signatureHeader;
    }

    public boolean lost() {
        return copies == 0;
    }

    public boolean duplicated() {
        return copies == 2;
    }

    public synchronized Outcome outcome() {
        return outcome;
    }

    public synchronized List<DeliveryAttempt> attempts() {
        return List.copyOf(attempts);
    }

    public synchronized boolean sent() {
        return !attempts.isEmpty();
    }

    public synchronized boolean acknowledged() {
        return attempts.stream().anyMatch(DeliveryAttempt::succeeded);
    }

    synchronized void record(DeliveryAttempt attempt) {
        attempts.add(attempt);
    }

    /** Marks one copy's schedule as ended; returns true when that was the last open copy. */
    synchronized boolean copyEnded(boolean succeeded) {
        if (succeeded) {
            outcome = Outcome.SUCCEEDED;
        }
        openCopies--;
        if (openCopies == 0 && outcome == Outcome.PENDING) {
            outcome = Outcome.FAILED;
        }
        return openCopies == 0;
    }
}
